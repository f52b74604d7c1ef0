package contracts

import (
	"bytes"
	"encoding/json"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// SeedJSON is v (a type of this package, which carries yaml tags in the
// seed's field names) as compact JSON with the same names and order as its
// YAML, unknown fields included: what git liza show --json prints.
func SeedJSON(v any) (json.RawMessage, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := NodeJSON(&b, &n); err != nil {
		return nil, err
	}
	return json.RawMessage(b.Bytes()), nil
}

// NodeJSON writes a YAML node as JSON: mappings in their order, scalars as
// the type YAML resolves them to (null, bool, a number JSON can hold) or
// else a string.
func NodeJSON(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			b.WriteString("null")
			return nil
		}
		return NodeJSON(b, n.Content[0])
	case yaml.AliasNode:
		return NodeJSON(b, n.Alias)
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			b.Write(k)
			b.WriteByte(':')
			if err := NodeJSON(b, n.Content[i+1]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := NodeJSON(b, c); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		switch n.ShortTag() {
		case "!!null":
			b.WriteString("null")
		case "!!bool":
			v, err := strconv.ParseBool(n.Value)
			if err != nil {
				v = n.Value == "true" || n.Value == "yes" || n.Value == "on"
			}
			b.WriteString(strconv.FormatBool(v))
		case "!!int", "!!float":
			if json.Valid([]byte(n.Value)) {
				b.WriteString(n.Value)
				return nil
			}
			s, _ := json.Marshal(n.Value)
			b.Write(s)
		default:
			s, _ := json.Marshal(n.Value)
			b.Write(s)
		}
	}
	return nil
}
