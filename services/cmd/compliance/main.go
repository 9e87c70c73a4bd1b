// Command compliance runs the compliance gRPC service.
package main

import (
	"github.com/zcustody/suite/services/compliance/app"
	internalapp "github.com/zcustody/suite/services/internal/app"
)

func main() { internalapp.Main(app.Name, app.Run) }
