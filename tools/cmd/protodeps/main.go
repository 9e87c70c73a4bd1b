// Command protodeps writes buf/validate/validate.proto, the protovalidate rules, into a folder
// of third-party protos. No npm package or Go module ships that file's text, but the pinned Go
// package of its generated code embeds the file's descriptor: printing it back gives the same
// declarations, which is all protoc plugins and buf need to read our annotations.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"github.com/jhump/protoreflect/desc"
	"github.com/jhump/protoreflect/desc/protoprint"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: protodeps <third-party proto folder>")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "protodeps:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	fd, err := desc.WrapFile(validate.File_buf_validate_validate_proto)
	if err != nil {
		return err
	}
	p := protoprint.Printer{}
	path := filepath.Join(root, fd.GetName())
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := p.PrintProtoFile(fd, f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
