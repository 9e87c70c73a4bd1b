package scenario

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/zcustody/suite/platform/signing"
)

// aheadPerWorker is how many signed requests wait per request in flight; the buffer is full
// before an attack starts, so the first requests of a step do not wait for signatures, and
// small, so few signatures go unused when the step ends.
const aheadPerWorker = 2

// maxAge drops a signed request that waited this long (the gateway accepts ±5 min).
const maxAge = time.Minute

// signedTargets feeds vegeta with requests signed by client (a fresh request-identifier,
// timestamp and signature each). Signers run ahead on their own goroutines, so the company's
// signature (RSA 2048 for ZTEST: about 0.7 ms of CPU) is made before a worker asks for a
// target, off the request's latency clock, as a real client signs before it sends.
type signedTargets struct {
	client *signing.Client
	path   string
	body   func() []byte
	// Starved counts targets a worker had to wait for: the signers could not keep up, so the
	// load generator, not the gateway, limited that step.
	Starved atomic.Int64
}

// signed is a request signed at a time.
type signed struct {
	target vegeta.Target
	at     time.Time
}

// Targeter starts the signers, which stop when ctx ends, and returns once they have filled
// the buffer. A signer that fails ends the attack (the targeter then has no more targets).
func (s *signedTargets) Targeter(parent context.Context, inFlight int) vegeta.Targeter {
	ctx, fail := context.WithCancelCause(parent)
	context.AfterFunc(parent, func() { fail(context.Canceled) }) // releases ctx with the attack
	ready := make(chan signed, max(8, aheadPerWorker*inFlight))
	for range runtime.GOMAXPROCS(0) {
		go s.sign(ctx, fail, ready)
	}
	for len(ready) < cap(ready) && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	return func(t *vegeta.Target) error {
		for {
			next, err := s.next(ctx, ready)
			if err != nil {
				return err
			}
			if time.Since(next.at) < maxAge {
				*t = next.target
				return nil
			}
		}
	}
}

// next takes a signed request, counting a wait as starvation.
func (s *signedTargets) next(ctx context.Context, ready <-chan signed) (signed, error) {
	select {
	case next := <-ready:
		return next, nil
	default:
	}
	s.Starved.Add(1)
	select {
	case next := <-ready:
		return next, nil
	case <-ctx.Done():
		return signed{}, vegeta.ErrNoTargets
	}
}

func (s *signedTargets) sign(ctx context.Context, fail context.CancelCauseFunc, ready chan<- signed) {
	for ctx.Err() == nil {
		t, err := s.target()
		if err != nil {
			fail(err)
			return
		}
		select {
		case ready <- signed{target: t, at: time.Now()}:
		case <-ctx.Done():
			return
		}
	}
}

func (s *signedTargets) target() (vegeta.Target, error) {
	body := s.body()
	req, err := s.client.NewRequest(http.MethodPost, s.path, body)
	if err != nil {
		return vegeta.Target{}, err
	}
	if req.URL == nil {
		return vegeta.Target{}, errors.New("signed request without URL")
	}
	return vegeta.Target{Method: req.Method, URL: req.URL.String(), Body: body, Header: req.Header}, nil
}
