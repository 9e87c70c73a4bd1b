// Command events runs the events gRPC service: the log, its search and its stream.
package main

import (
	"github.com/zcustody/suite/services/events/app"
	internalapp "github.com/zcustody/suite/services/internal/app"
)

func main() { internalapp.Main(app.Name, app.Run) }
