// Command custody runs the custody gRPC service.
package main

import (
	"github.com/zcustody/suite/services/custody/app"
	internalapp "github.com/zcustody/suite/services/internal/app"
)

func main() { internalapp.Main(app.Name, app.Run) }
