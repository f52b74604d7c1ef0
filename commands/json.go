package commands

import (
	"bytes"
	"encoding/json"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// yamlJSON renders v as indented JSON through its YAML form, so that JSON
// output has exactly the seed's field names and order, unknown fields
// included.
func yamlJSON(v any) ([]byte, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	return nodeJSONIndent(&n, "")
}

// nodeJSONIndent renders a YAML node as indented JSON, every line but the
// first starting with prefix.
func nodeJSONIndent(n *yaml.Node, prefix string) ([]byte, error) {
	var b bytes.Buffer
	if err := nodeJSON(&b, n); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), prefix, "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func nodeJSON(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			b.WriteString("null")
			return nil
		}
		return nodeJSON(b, n.Content[0])
	case yaml.AliasNode:
		return nodeJSON(b, n.Alias)
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			b.Write(k)
			b.WriteByte(':')
			if err := nodeJSON(b, n.Content[i+1]); err != nil {
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
			if err := nodeJSON(b, c); err != nil {
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
