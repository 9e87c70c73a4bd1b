# Custody, trading and settlement suite. `make help` lists the targets.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.ONESHELL:
.DEFAULT_GOAL := help
MAKEFLAGS += --warn-undefined-variables --no-builtin-rules

GO_PACKAGES := ./proto/... ./services/... ./gateway/... ./deploy/local/... ./deploy/bench/...
TEST_FLAGS ?= -count=1 -timeout=15m
# buf breaking compares the contracts against this git ref (CI sets it to the last landed commit).
BREAKING_AGAINST ?= .git\#branch=main

.PHONY: help
help: ## List the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

.PHONY: run
run: ## Start the whole suite on the embedded database with demo data (gateway on 127.0.0.1:8080).
	go run ./deploy/local/cmd/suite

.PHONY: test
test: ## Run every test; starts the embedded database itself.
	deploy/local/with-db.sh go test $(TEST_FLAGS) $(GO_PACKAGES)
	cd deploy/k8s && GOWORK=off go test $(TEST_FLAGS) ./...

FUZZ_TIME ?= 15s
FUZZ_TARGETS := ./gateway/internal/auth:FuzzReadHeaders ./services/canonical:FuzzFromJSON ./services/internal/amount:FuzzParse ./gateway/internal/jsonpb:FuzzMarshalMatchesProtojson

.PHONY: fuzz
fuzz: ## Run each fuzz target for FUZZ_TIME (CI runs them bounded).
	for t in $(FUZZ_TARGETS); do
	  go test -run='^$$' -fuzz="^$${t#*:}$$" -fuzztime=$(FUZZ_TIME) "$${t%%:*}"
	done

.PHONY: generate
generate: ## Regenerate the Go, gRPC, gateway code and the OpenAPI document from proto/.
	go tool buf format -w
	go tool buf generate

.PHONY: check-generated
check-generated: generate ## Fail when regenerating changes a committed file.
	@if [[ -n "$$(git status --porcelain -- proto gateway/openapi)" ]]; then
	  git status --porcelain -- proto gateway/openapi
	  echo "generated code is out of date: run make generate and commit" >&2
	  exit 1
	fi

.PHONY: lint
lint: ## buf lint, buf format, buf breaking, gofmt and go vet.
	go tool buf lint
	go tool buf format --diff --exit-code
	go tool buf breaking --against '$(BREAKING_AGAINST)'
	test -z "$$(gofmt -l proto services gateway deploy)" || { gofmt -l proto services gateway deploy; exit 1; }
	go vet $(GO_PACKAGES)
	cd deploy/k8s && GOWORK=off go vet ./...

.PHONY: build
build: ## Build every binary into bin/.
	mkdir -p bin
	for svc in servicedesk trading interchange custody compliance; do go build -o bin/$$svc ./services/cmd/$$svc; done
	go build -o bin/gateway ./gateway/cmd/gateway
	go build -o bin/suite ./deploy/local/cmd/suite
	go build -o bin/suitectl ./deploy/local/cmd/suitectl
	go build -o bin/ferretdb ./deploy/local/cmd/ferretdb

.PHONY: bench
bench: ## Measure gateway, service and driver throughput, latency, memory, start-up; results in .data/bench/ (docs/performance.md).
	go run ./deploy/bench/cmd/bench
