package agentd

import (
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

// Value converts a Go value into a JSON value (google.protobuf.Value): nil,
// bools, numbers, strings, maps with string keys, slices, *structpb.Value and
// *structpb.Struct directly; anything else through encoding/json (so structs
// with json tags work). Numbers become doubles on the wire.
func Value(v any) (*structpb.Value, error) {
	switch x := v.(type) {
	case *structpb.Value:
		return x, nil
	case *structpb.Struct:
		return structpb.NewStructValue(x), nil
	case *structpb.ListValue:
		return structpb.NewListValue(x), nil
	}
	if pv, err := structpb.NewValue(v); err == nil {
		return pv, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("agentd: %T is not a JSON value: %w", v, err)
	}
	out := &structpb.Value{}
	if err := protojson.Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("agentd: %T is not a JSON value: %w", v, err)
	}
	return out, nil
}

// Struct converts a map (or any value that encodes as a JSON object) into a
// google.protobuf.Struct. nil gives nil.
func Struct(v any) (*structpb.Struct, error) {
	if v == nil {
		return nil, nil
	}
	if s, ok := v.(*structpb.Struct); ok {
		return s, nil
	}
	if m, ok := v.(map[string]any); ok {
		if s, err := structpb.NewStruct(m); err == nil {
			return s, nil
		}
	}
	pv, err := Value(v)
	if err != nil {
		return nil, err
	}
	s := pv.GetStructValue()
	if s == nil {
		return nil, fmt.Errorf("agentd: %T is not a JSON object", v)
	}
	return s, nil
}

// Attr builds an ordered signal attribute. A value that is not JSON becomes
// its fmt %v string.
func Attr(name string, value any) *agentdv1.Attribute {
	v, err := Value(value)
	if err != nil {
		v = structpb.NewStringValue(fmt.Sprint(value))
	}
	return &agentdv1.Attribute{Name: name, Value: v}
}

// Attrs builds ordered attributes from name, value pairs:
// Attrs("name", "Ada", "role", "admin"). A trailing name without a value is
// ignored; a non-string name is formatted with %v.
func Attrs(pairs ...any) []*agentdv1.Attribute {
	out := make([]*agentdv1.Attribute, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, Attr(fmt.Sprint(pairs[i]), pairs[i+1]))
	}
	return out
}

// UserText is a user message with one text part, for WithMessages.
func UserText(text string) *agentdv1.Message {
	return textMessage(agentdv1.Role_ROLE_USER, text)
}

// AssistantText is an assistant message with one text part, for WithMessages.
func AssistantText(text string) *agentdv1.Message {
	return textMessage(agentdv1.Role_ROLE_ASSISTANT, text)
}

// SystemText is a system message with one text part, for WithMessages.
func SystemText(text string) *agentdv1.Message {
	return textMessage(agentdv1.Role_ROLE_SYSTEM, text)
}

func textMessage(role agentdv1.Role, text string) *agentdv1.Message {
	return &agentdv1.Message{
		Role:  role,
		Parts: []*agentdv1.Part{{Part: &agentdv1.Part_Text{Text: &agentdv1.TextPart{Text: text}}}},
	}
}

// MessageText joins the text parts of a message.
func MessageText(m *agentdv1.Message) string {
	var out string
	for _, p := range m.GetParts() {
		if t := p.GetText(); t != nil {
			out += t.GetText()
		}
	}
	return out
}

// SignalText is the text of a signal: its text, or its joined text parts.
func SignalText(s *agentdv1.Signal) string {
	if s.GetText() != "" {
		return s.GetText()
	}
	var out string
	for _, p := range s.GetParts() {
		if t := p.GetText(); t != nil {
			out += t.GetText()
		}
	}
	return out
}
