package mcpserver

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// seedJSON is v (a contracts type, which carries yaml tags in the seed's
// field names) as JSON with the same names and order as its YAML: what
// git liza show --json prints. It goes through the YAML node tree, so a
// field the contract keeps without knowing it (an extra) is kept too.
func seedJSON(v any) (json.RawMessage, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := writeNodeJSON(&b, &n); err != nil {
		return nil, err
	}
	return json.RawMessage(b.Bytes()), nil
}

// writeNodeJSON writes one YAML node as JSON. Scalars keep the type YAML
// resolves them to (null, bool, int, float); anything else is a string.
func writeNodeJSON(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			b.WriteString("null")
			return nil
		}
		return writeNodeJSON(b, n.Content[0])
	case yaml.AliasNode:
		return writeNodeJSON(b, n.Alias)
	case yaml.MappingNode, yaml.SequenceNode:
		open, close, step := byte('['), byte(']'), 1
		if n.Kind == yaml.MappingNode {
			open, close, step = '{', '}', 2
		}
		b.WriteByte(open)
		for i := 0; i+step-1 < len(n.Content); i += step {
			if i > 0 {
				b.WriteByte(',')
			}
			if step == 2 {
				key, err := json.Marshal(n.Content[i].Value)
				if err != nil {
					return err
				}
				b.Write(key)
				b.WriteByte(':')
			}
			if err := writeNodeJSON(b, n.Content[i+step-1]); err != nil {
				return err
			}
		}
		b.WriteByte(close)
		return nil
	}
	switch n.ShortTag() {
	case "!!null":
		b.WriteString("null")
		return nil
	case "!!bool":
		if v, err := strconv.ParseBool(n.Value); err == nil {
			b.WriteString(strconv.FormatBool(v))
			return nil
		}
	case "!!int":
		if v, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
			b.WriteString(strconv.FormatInt(v, 10))
			return nil
		}
	case "!!float":
		if v, err := strconv.ParseFloat(n.Value, 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			return nil
		}
	}
	s, err := json.Marshal(n.Value)
	if err != nil {
		return err
	}
	b.Write(s)
	return nil
}
