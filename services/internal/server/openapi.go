package server

import (
	"fmt"
	"io"

	"github.com/danielgtaylor/huma/v2"
)

// WriteOpenAPI writes api's OpenAPI 3.1 document as YAML. Services run it
// for their `openapi` subcommand, so `make openapi` regenerates openapi/
// without starting a server.
func WriteOpenAPI(w io.Writer, api huma.API) error {
	b, err := api.OpenAPI().YAML()
	if err != nil {
		return fmt.Errorf("server: openapi: %w", err)
	}
	_, err = w.Write(b)
	return err
}
