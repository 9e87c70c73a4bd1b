// Command suitectl signs a request with the demo keys and sends it to the gateway, printing
// the status and the response body:
//
//	suitectl [-url URL] [-company ztest|zacme|zbybit|zderibit|zcustody] [-as maker|checker|viewer|admin|none] METHOD PATH [BODY]
//
// (zbybit and zderibit are the operators of the demo venues BYBIT and DERIBIT: signing as one
// of them is signing as the venue)
//
// and acts on a pending service request with the user's approval key (fetches the object to
// sign from /v3/api/servicedesk/pending, signs it, posts it to /v3/api/servicedesk/approve):
//
//	suitectl [-as maker] approve SERV-REQ-...                 (the maker confirms)
//	suitectl -as checker approve SERV-REQ-... Approve         (the checker approves)
//	suitectl -as checker approve SERV-REQ-... Reject "reason" (the checker rejects)
//
// and calls internal gRPC methods as the demo settlement engine (see grpc.go):
//
//	suitectl grpc interchange.v1.SettlementEngineService/AdvanceSettlement '{"settlementTrackingId":"STL-…","toStatus":"SETTLEMENT_INITIATED"}'
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/signing"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "suitectl:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("suitectl", flag.ContinueOnError)
	url := fs.String("url", envOr("SUITE_URL", "http://127.0.0.1:8080"), "gateway base URL")
	company := fs.String("company", "ztest", "demo company: ztest or zacme (clients), zbybit or zderibit (venue operators), zcustody (the custodian)")
	as := fs.String("as", "maker", "demo user: maker, checker, viewer, or none for a company-level call")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 && fs.Arg(0) == "grpc" {
		return internalCall(dataDir(), fs.Args()[1:])
	}
	if fs.NArg() < 2 || fs.NArg() > 4 {
		return fmt.Errorf("usage: suitectl [flags] METHOD PATH [BODY] | suitectl [flags] approve REQUEST-ID [Approve|Reject [REASON]]")
	}
	pemKey, err := demo.Key(*company + "-company.pem")
	if err != nil {
		return err
	}
	key, err := signing.ParsePrivateKey(pemKey)
	if err != nil {
		return err
	}
	c := &signing.Client{BaseURL: strings.TrimRight(*url, "/"), Company: strings.ToUpper(*company), Key: key}
	if *as != "none" {
		c.Submitter = demo.UserEmail(*company, *as)
	}
	if fs.Arg(0) == "approve" {
		return approve(c, *company+"-"+*as+".pem", fs.Args()[1:])
	}
	var body []byte
	if fs.NArg() == 3 {
		body = []byte(fs.Arg(2))
	}
	status, resp, err := c.Do(strings.ToUpper(fs.Arg(0)), fs.Arg(1), body)
	if err != nil {
		return err
	}
	show(status, resp)
	return nil
}

func show(status int, resp []byte) {
	fmt.Println("HTTP", status)
	var pretty bytes.Buffer
	if json.Indent(&pretty, resp, "", "  ") == nil {
		resp = pretty.Bytes()
	}
	fmt.Println(string(resp))
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// dataDir is the folder of the running suite's services file: DATA_DIR when set, else the
// .data of the nearest folder, from here upwards, that holds one (make run writes it in the
// repository root), so suitectl works from any folder of the repository.
func dataDir() string {
	if d := os.Getenv("DATA_DIR"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return ".data"
	}
	for {
		candidate := filepath.Join(dir, ".data")
		if _, err := os.Stat(filepath.Join(candidate, "services.json")); err == nil {
			return candidate
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ".data"
		}
		dir = parent
	}
}
