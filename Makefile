# Custody, trading and settlement suite. `make help` lists the targets.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.ONESHELL:
.DEFAULT_GOAL := help
MAKEFLAGS += --warn-undefined-variables --no-builtin-rules

GO_PACKAGES := ./proto/... ./platform/... ./services/... ./gateway/... ./deploy/local/... ./deploy/bench/...
TEST_FLAGS ?= -count=1 -timeout=15m
# buf breaking compares the contracts against this git ref (CI sets it to the last landed commit).
BREAKING_REF ?= main
# Third-party protos our annotations import, fetched or derived by proto-deps (never committed).
THIRD_PARTY := .gen/third_party

.PHONY: help
help: ## List the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

.PHONY: run
run: ## Start the whole suite on the embedded database with demo data (gateway on 127.0.0.1:8080).
	go run ./deploy/local/cmd/suite

.PHONY: test
test: node_modules/.installed ## Run every test; starts the embedded database itself.
	deploy/local/with-db.sh go test $(TEST_FLAGS) $(GO_PACKAGES)
	cd deploy/k8s && GOWORK=off go test $(TEST_FLAGS) ./...

FUZZ_TIME ?= 15s
FUZZ_TARGETS := ./gateway/internal/auth:FuzzReadHeaders ./platform/canonical:FuzzFromJSON ./services/internal/amount:FuzzParse ./gateway/internal/jsonpb:FuzzMarshalMatchesProtojson

.PHONY: fuzz
fuzz: ## Run each fuzz target for FUZZ_TIME (CI runs them bounded).
	for t in $(FUZZ_TARGETS); do
	  go test -run='^$$' -fuzz="^$${t#*:}$$" -fuzztime=$(FUZZ_TIME) "$${t%%:*}"
	done

node_modules/.installed: package.json package-lock.json clients/typescript/package.json
	npm ci --ignore-scripts
	touch $@

.PHONY: proto-deps
proto-deps: node_modules/.installed ## Place the pinned third-party protos in .gen/third_party.
	rm -rf $(THIRD_PARTY)
	mkdir -p $(THIRD_PARTY)/google/api $(THIRD_PARTY)/openapiv3
	# google.api: the npm package google-proto-files (version in package-lock.json).
	cp node_modules/google-proto-files/google/api/{annotations,http,field_behavior}.proto $(THIRD_PARTY)/google/api/
	# openapi.v3: the files of the gnostic Go module the tools module pins.
	gnostic="$$(cd tools && go mod download github.com/google/gnostic && go list -m -f '{{.Dir}}' github.com/google/gnostic)"
	cp "$$gnostic"/openapiv3/{annotations,OpenAPIv3}.proto $(THIRD_PARTY)/openapiv3/
	# buf.validate: printed from the descriptor its pinned Go package embeds.
	go run ./tools/cmd/protodeps $(THIRD_PARTY)
	chmod -R u+w $(THIRD_PARTY)

.PHONY: generate
generate: proto-deps ## Regenerate the Go, gRPC, gateway code and the OpenAPI document from proto/.
	go tool buf format -w proto
	go tool buf generate
	go run ./tools/cmd/openapidoc -in .gen/openapi/openapi.yaml -out gateway/openapi
	npm run --silent generate --workspace clients/typescript

.PHONY: check-generated
check-generated: generate ## Fail when regenerating changes a committed file.
	@if [[ -n "$$(git status --porcelain -- proto gateway/openapi clients/typescript/src)" ]]; then
	  git status --porcelain -- proto gateway/openapi clients/typescript/src
	  echo "generated code is out of date: run make generate and commit" >&2
	  exit 1
	fi

.PHONY: lint
lint: proto-deps ## buf lint, buf format, buf breaking, the OpenAPI linters, gofmt and go vet.
	go tool buf lint
	go tool buf format --diff --exit-code proto
	# The contracts at BREAKING_REF, built with today's third-party protos (they are not in git).
	against="$$(mktemp -d)"
	trap 'git worktree remove --force "$$against/tree" >/dev/null 2>&1 || true; rm -rf "$$against"' EXIT
	git worktree add --detach -q "$$against/tree" '$(BREAKING_REF)'
	mkdir -p "$$against/tree/.gen" && cp -r $(THIRD_PARTY) "$$against/tree/.gen/"
	(cd "$$against/tree" && go tool buf build proto -o "$$against/image.binpb")
	go tool buf breaking proto --against "$$against/image.binpb"
	npx --no-install redocly lint --config gateway/openapi/redocly.yaml gateway/openapi/openapi.yaml
	npx --no-install spectral lint gateway/openapi/openapi.yaml -r gateway/openapi/spectral.yaml --fail-severity error
	test -z "$$(gofmt -l proto platform services gateway deploy)" || { gofmt -l proto platform services gateway deploy; exit 1; }
	go vet $(GO_PACKAGES)
	cd deploy/k8s && GOWORK=off go vet ./...

.PHONY: build
build: ## Build every binary into bin/.
	mkdir -p bin
	for svc in servicedesk trading interchange custody compliance events dispatcher; do go build -o bin/$$svc ./services/cmd/$$svc; done
	go build -o bin/gateway ./gateway/cmd/gateway
	go build -o bin/suite ./deploy/local/cmd/suite
	go build -o bin/suitectl ./deploy/local/cmd/suitectl
	go build -o bin/ferretdb ./deploy/local/cmd/ferretdb

.PHONY: bench
bench: ## Measure gateway, service and driver throughput, latency, memory, start-up; results in .data/bench/ (docs/performance.md).
	go run ./deploy/bench/cmd/bench
