// Command dispatcher runs the webhook dispatcher over the events service's database.
package main

import (
	"github.com/zcustody/suite/services/events/dispatch/app"
	internalapp "github.com/zcustody/suite/services/internal/app"
)

func main() { internalapp.Main(app.Name, app.Run) }
