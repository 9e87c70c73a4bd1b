// Package gateway holds the REST gateway's embedded contract file: the OpenAPI document
// generated from the protos (their google.api.http options map the contract's paths onto gRPC
// methods).
package gateway

import _ "embed"

// OpenAPI is the OpenAPI 3.1 document generated from the protos (make generate), as JSON.
//
//go:embed openapi/openapi.json
var OpenAPI []byte

// OpenAPIYAML is the same document as YAML.
//
//go:embed openapi/openapi.yaml
var OpenAPIYAML []byte
