package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/zcustody/suite/deploy/bench/internal/data"
	tradingv1 "github.com/zcustody/suite/proto/trading/v1"
)

// ReadPath is endpoint 2, the trading wallet search.
const ReadPath = "/v3/api/trading/wallets"

// readBody filters on one venue (a tenth of the bulk wallets) and asks for one page of 10.
const readBody = `{"venueIds":["` + data.ReadVenue + `"],"paginationLimit":10}`

// readPage is the page the read asks for.
const readPage = data.ReadPage

// Read is the wallet search: the same filter and page through each layer.
func (e *Env) Read() Scenario {
	return Scenario{Name: "read", Title: "trading wallet search (endpoint 2): venueIds=[" + data.ReadVenue + "], page of 10",
		Layers: []Layer{
			e.ReadVia(e.gatewayURL),
			{Name: LayerDirect, Targets: staticTargets("direct-read"), Client: callClient(e.directRead)},
			{Name: LayerRaw, Targets: staticTargets("raw-read"), Client: callClient(e.rawRead)},
		}}
}

// ReadVia is the read's gateway layer through the gateway at gatewayURL.
func (e *Env) ReadVia(gatewayURL string) Layer {
	c := e.signingClient(data.Viewer)
	c.BaseURL = gatewayURL
	signed := &signedTargets{client: c, path: ReadPath, body: func() []byte { return []byte(readBody) }}
	return Layer{Name: LayerGateway, Targets: signed.Targeter, starved: &signed.Starved}
}

func (e *Env) directRead(ctx context.Context) error {
	_, err := e.searchDirect(ctx)
	return err
}

func (e *Env) searchDirect(ctx context.Context) ([]string, error) {
	ctx, err := e.tokens[data.Viewer].outgoing(ctx)
	if err != nil {
		return nil, err
	}
	resp, err := e.trading.SearchWallets(ctx, &tradingv1.SearchWalletsRequest{VenueIds: []string{data.ReadVenue}, PaginationLimit: proto.Int32(readPage)})
	if err != nil {
		return nil, err
	}
	ids := []string{fmt.Sprint(resp.GetTotal())}
	for _, w := range resp.GetItems() {
		ids = append(ids, w.GetId())
	}
	return ids, nil
}

// rawRead is the trading store's query: one find (filter, sort, page, projection) and one
// count, through the driver, decoded as the service decodes it.
func (e *Env) rawRead(ctx context.Context) error {
	_, err := e.searchRaw(ctx)
	return err
}

func (e *Env) searchRaw(ctx context.Context) ([]string, error) {
	wallets, total, err := e.wallets.SearchWallets(ctx, data.ReadFilter())
	if err != nil {
		return nil, err
	}
	ids := []string{fmt.Sprint(total)}
	for _, w := range wallets {
		ids = append(ids, w.ID)
	}
	return ids, nil
}

// CheckRead fails unless the three layers answer the same total and page, and the page is full.
func (e *Env) CheckRead(ctx context.Context) error {
	gw, err := e.searchGateway()
	if err != nil {
		return err
	}
	direct, err := e.searchDirect(ctx)
	if err != nil {
		return fmt.Errorf("direct read: %w", err)
	}
	raw, err := e.searchRaw(ctx)
	if err != nil {
		return fmt.Errorf("raw read: %w", err)
	}
	if !slices.Equal(gw, direct) || !slices.Equal(direct, raw) {
		return fmt.Errorf("layers disagree on the read: gateway %v, direct %v, raw %v", gw, direct, raw)
	}
	if len(raw) != readPage+1 {
		return fmt.Errorf("the read returned %d wallets, want a full page of %d (is the data loaded?)", len(raw)-1, readPage)
	}
	return nil
}

func (e *Env) searchGateway() ([]string, error) {
	status, body, err := e.signingClient(data.Viewer).Do(http.MethodPost, ReadPath, []byte(readBody))
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("gateway read: HTTP %d: %s", status, body)
	}
	var resp struct {
		Total int `json:"total"`
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, fmt.Errorf("gateway read: %w", err)
	}
	ids := []string{fmt.Sprint(resp.Total)}
	for _, it := range resp.Items {
		ids = append(ids, it.ID)
	}
	return ids, nil
}
