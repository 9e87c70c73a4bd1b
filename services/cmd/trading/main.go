// Command trading runs the trading gRPC service.
package main

import (
	internalapp "github.com/zcustody/suite/services/internal/app"
	"github.com/zcustody/suite/services/trading/app"
)

func main() { internalapp.Main(app.Name, app.Run) }
