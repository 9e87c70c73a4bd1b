package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/zcustody/suite/deploy/local/demo"
	"github.com/zcustody/suite/platform/principal"

	// The contracts register their descriptors, so methods can be called by name.
	_ "github.com/zcustody/suite/proto/compliance/v1"
	_ "github.com/zcustody/suite/proto/custody/v1"
	_ "github.com/zcustody/suite/proto/interchange/v1"
	_ "github.com/zcustody/suite/proto/servicedesk/v1"
	_ "github.com/zcustody/suite/proto/trading/v1"
)

// internalCall calls an internal gRPC method as the demo settlement engine:
//
//	suitectl grpc interchange.v1.SettlementEngineService/AdvanceSettlement '{"settlementTrackingId":"STL-…","toStatus":"SETTLEMENT_INITIATED"}'
//
// The service's address comes from the services file make run writes (.data/services.json).
func internalCall(dataDir string, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: suitectl grpc <package.Service>/<Method> JSON")
	}
	service, method, ok := strings.Cut(args[0], "/")
	if !ok {
		return fmt.Errorf("method %q: want package.Service/Method", args[0])
	}
	desc, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(service))
	if err != nil {
		return fmt.Errorf("unknown service %s", service)
	}
	m := desc.(protoreflect.ServiceDescriptor).Methods().ByName(protoreflect.Name(method))
	if m == nil {
		return fmt.Errorf("unknown method %s of %s", method, service)
	}
	in := dynamicpb.NewMessage(m.Input())
	if err := protojson.Unmarshal([]byte(args[1]), in); err != nil {
		return fmt.Errorf("request: %w", err)
	}
	addr, err := serviceAddr(dataDir, service)
	if err != nil {
		return err
	}
	ctx, err := engineContext()
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	out := dynamicpb.NewMessage(m.Output())
	if err := conn.Invoke(ctx, "/"+service+"/"+method, in, out); err != nil {
		return err
	}
	text, _ := protojson.MarshalOptions{Multiline: true, EmitDefaultValues: true}.Marshal(out)
	fmt.Println(string(text))
	return nil
}

func engineContext() (context.Context, error) {
	pemKey, err := demo.Key("settlement-engine.pem")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "suitectl-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "engine.pem")
	if err := os.WriteFile(path, pemKey, 0o600); err != nil {
		return nil, err
	}
	key, err := principal.LoadPrivateKey(path)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	_ = cancel // the process ends after the call
	return principal.NewSigner("settlement-engine", key, time.Minute).OutgoingContext(ctx,
		principal.Principal{Kind: principal.KindSystem, System: "settlement-engine"})
}

// serviceAddr finds the gRPC address of the service that owns a gRPC service name.
func serviceAddr(dataDir, service string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dataDir, "services.json"))
	if err != nil {
		return "", fmt.Errorf("services file (is make run running?): %w", err)
	}
	var addrs map[string]string
	if err := json.Unmarshal(data, &addrs); err != nil {
		return "", fmt.Errorf("services file: %w", err)
	}
	owner, _, _ := strings.Cut(service, ".")
	addr, ok := addrs[owner]
	if !ok {
		return "", fmt.Errorf("no address for %s", owner)
	}
	return addr, nil
}
