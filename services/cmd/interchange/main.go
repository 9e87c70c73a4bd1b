// Command interchange runs the interchange gRPC service.
package main

import (
	"github.com/zcustody/suite/services/interchange/app"
	internalapp "github.com/zcustody/suite/services/internal/app"
)

func main() { internalapp.Main(app.Name, app.Run) }
