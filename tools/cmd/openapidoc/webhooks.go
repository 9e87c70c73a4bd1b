package main

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/reflect/protoreflect"

	eventsv1 "github.com/zcustody/suite/proto/events/v1"
)

// The webhooks section: one webhook per event type events/v1/data.proto declares, its body
// the base's WebhookEvent with `type` fixed to the event type and `data` the type's message,
// and its headers the Standard Webhooks ones. The data messages, which no RPC names, are
// reached from here, so they stay in the document. Each data message lists as required the
// fields the services always write (those without presence: JSON carries their default
// values); optional and message fields are left out when unset.

type webhookItem struct {
	Post webhookOp `yaml:"post"`
}

type webhookOp struct {
	Tags        []string            `yaml:"tags"`
	OperationID string              `yaml:"operationId"`
	Summary     string              `yaml:"summary"`
	Description string              `yaml:"description"`
	Parameters  []refNode           `yaml:"parameters"`
	RequestBody webhookBody         `yaml:"requestBody"`
	Responses   map[string]response `yaml:"responses"`
}

type refNode struct {
	Ref string `yaml:"$ref"`
}

type webhookBody struct {
	Required bool                 `yaml:"required"`
	Content  map[string]mediaType `yaml:"content"`
}

type mediaType struct {
	Schema bodySchema `yaml:"schema"`
}

type bodySchema struct {
	AllOf []any `yaml:"allOf"`
}

type typedBody struct {
	Type       string         `yaml:"type"`
	Required   []string       `yaml:"required,flow"`
	Properties map[string]any `yaml:"properties"`
}

type response struct {
	Description string `yaml:"description"`
}

var webhookHeaders = []string{"WebhookId", "WebhookTimestamp", "WebhookSignature"}

// webhooks adds the webhooks section to root and the required fields to the data messages'
// schemas (still under their full names).
func webhooks(root, components *yaml.Node) error {
	schemas, params := get(components, "schemas"), get(components, "parameters")
	if get(schemas, "WebhookEvent") == nil {
		return fmt.Errorf("components.schemas.WebhookEvent is missing from the base document")
	}
	for _, name := range webhookHeaders {
		if get(params, name) == nil {
			return fmt.Errorf("components.parameters.%s is missing from the base document", name)
		}
	}
	msgs := eventsv1.File_events_v1_data_proto.Messages()
	for i := range msgs.Len() {
		if err := requireFields(schemas, msgs.Get(i)); err != nil {
			return err
		}
	}
	section := &yaml.Node{Kind: yaml.MappingNode}
	for _, t := range eventsv1.EventTypes() {
		md, _ := eventsv1.DataMessage(t)
		params := make([]refNode, len(webhookHeaders))
		for i, name := range webhookHeaders {
			params[i] = refNode{"#/components/parameters/" + name}
		}
		item := webhookItem{Post: webhookOp{
			Tags:        []string{"webhooks"},
			OperationID: webhookOperationID(t),
			Summary:     "Event " + t,
			Description: fmt.Sprintf("Sent for each `%s` event to every active subscription that takes its type; its `data` is described by %s.", t, md.Name()),
			Parameters:  params,
			RequestBody: webhookBody{Required: true, Content: map[string]mediaType{"application/json": {Schema: bodySchema{AllOf: []any{
				refNode{"#/components/schemas/WebhookEvent"},
				typedBody{Type: "object", Required: []string{"type", "data"}, Properties: map[string]any{
					"type": map[string]string{"const": t},
					"data": refNode{"#/components/schemas/" + string(md.FullName())},
				}},
			}}}}},
			Responses: map[string]response{
				"2XX": {Description: "Delivered: the event is kept. The body is ignored."},
				"410": {Description: "Gone: the subscription is suspended at once (its deliveries are kept; re-enable it to resume)."},
			},
		}}
		var v yaml.Node
		if err := v.Encode(item); err != nil {
			return err
		}
		section.Content = append(section.Content, str(t), &v)
	}
	set(root, "webhooks", section)
	return nil
}

// requireFields sets the required list of md's schema: its fields without presence.
func requireFields(schemas *yaml.Node, md protoreflect.MessageDescriptor) error {
	s := get(schemas, string(md.FullName()))
	if s == nil {
		return fmt.Errorf("no schema %s in the generated document", md.FullName())
	}
	req := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	fields := md.Fields()
	for i := range fields.Len() {
		if f := fields.Get(i); !f.HasPresence() {
			req.Content = append(req.Content, str(f.JSONName()))
		}
	}
	set(s, "required", req)
	return nil
}

// webhookOperationID is the operation id of event type t's webhook: `service_request.created`
// becomes `serviceRequestCreatedWebhook`.
func webhookOperationID(t string) string {
	return lowerCamel(strings.ReplaceAll(t, ".", "_")) + "Webhook"
}
