package commands

import (
	"bytes"
	"encoding/json"

	"github.com/liza-dev/git-liza/contracts"

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
	if err := contracts.NodeJSON(&b, n); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), prefix, "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
