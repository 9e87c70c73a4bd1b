// Command servicedesk runs the servicedesk gRPC service.
package main

import (
	internalapp "github.com/zcustody/suite/services/internal/app"
	"github.com/zcustody/suite/services/servicedesk/app"
)

func main() { internalapp.Main(app.Name, app.Run) }
