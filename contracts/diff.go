package contracts

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// FieldChange is one field that differs between two versions of an
// entity of the state: a path to a scalar ("status", "history[4].reason",
// "depends_on"), its old and new values, and whether it was added or
// removed rather than changed.
type FieldChange struct {
	Field   string `json:"field"`
	Old     string `json:"old,omitempty"`
	New     string `json:"new,omitempty"`
	Added   bool   `json:"added,omitempty"`
	Removed bool   `json:"removed,omitempty"`
}

// DiffYAML compares two YAML documents (either may be empty: an entity
// added or removed) field by field, in the order of the newer one, and
// returns the fields that differ. Lists of scalars compare as one value
// ("[a, b]"); lists of mappings (a task's history) and mappings by each of
// their fields.
func DiffYAML(old, new []byte) ([]FieldChange, error) {
	a, err := flattenYAML(old)
	if err != nil {
		return nil, err
	}
	b, err := flattenYAML(new)
	if err != nil {
		return nil, err
	}
	before := map[string]string{}
	for _, f := range a {
		before[f.path] = f.value
	}
	seen := map[string]bool{}
	var out []FieldChange
	for _, f := range b {
		seen[f.path] = true
		v, ok := before[f.path]
		switch {
		case !ok:
			out = append(out, FieldChange{Field: f.path, New: f.value, Added: true})
		case v != f.value:
			out = append(out, FieldChange{Field: f.path, Old: v, New: f.value})
		}
	}
	for _, f := range a {
		if !seen[f.path] {
			out = append(out, FieldChange{Field: f.path, Old: f.value, Removed: true})
		}
	}
	return groupElements(out, a), nil
}

// groupElements makes the fields of a list element that was added (or
// removed) whole, such as a new history event, one change:
// "history[2]: event: blocked, agent: coder-1, ...".
func groupElements(changes []FieldChange, old []flatField) []FieldChange {
	had := map[string]bool{}
	for _, f := range old {
		if p, _, ok := elementOf(f.path); ok {
			had[p] = true
		}
	}
	var out []FieldChange
	for _, c := range changes {
		p, field, ok := elementOf(c.Field)
		whole := ok && (c.Added && !had[p] || c.Removed && had[p] && !hasElement(changes, p))
		if !whole {
			out = append(out, c)
			continue
		}
		v := field + ": " + c.New + c.Old
		if n := len(out); n > 0 && out[n-1].Field == p && out[n-1].Added == c.Added {
			if c.Added {
				out[n-1].New += ", " + v
			} else {
				out[n-1].Old += ", " + v
			}
			continue
		}
		g := FieldChange{Field: p, Added: c.Added, Removed: c.Removed}
		if c.Added {
			g.New = v
		} else {
			g.Old = v
		}
		out = append(out, g)
	}
	return out
}

// hasElement reports whether some change keeps list element p (a field of
// it is changed or added rather than removed).
func hasElement(changes []FieldChange, p string) bool {
	for _, c := range changes {
		if q, _, ok := elementOf(c.Field); ok && q == p && !c.Removed {
			return true
		}
	}
	return false
}

// elementOf splits "history[2].reason" into "history[2]" and "reason".
func elementOf(path string) (elem, field string, ok bool) {
	i := strings.LastIndex(path, "].")
	if i < 0 {
		return "", "", false
	}
	return path[:i+1], path[i+2:], true
}

type flatField struct{ path, value string }

func flattenYAML(data []byte) ([]flatField, error) {
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, nil
	}
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		return nil, err
	}
	var out []flatField
	flatten(&n, "", &out)
	return out, nil
}

func flatten(n *yaml.Node, path string, out *[]flatField) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			flatten(c, path, out)
		}
	case yaml.AliasNode:
		// Shown as written, not followed: a file of commits that do not
		// verify is read too, and nested aliases name exponentially
		// many fields.
		*out = append(*out, flatField{path, "*" + n.Value})
	case yaml.MappingNode:
		if len(n.Content) == 0 {
			*out = append(*out, flatField{path, "{}"})
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			if path != "" {
				key = path + "." + key
			}
			flatten(n.Content[i+1], key, out)
		}
	case yaml.SequenceNode:
		if scalars(n) {
			var vals []string
			for _, c := range n.Content {
				if c.Kind == yaml.AliasNode {
					vals = append(vals, "*"+c.Value)
				} else {
					vals = append(vals, c.Value)
				}
			}
			*out = append(*out, flatField{path, "[" + strings.Join(vals, ", ") + "]"})
			return
		}
		for i, c := range n.Content {
			flatten(c, fmt.Sprintf("%s[%d]", path, i), out)
		}
	default:
		*out = append(*out, flatField{path, n.Value})
	}
}

// scalars reports whether a sequence holds only scalars and aliases (or
// nothing).
func scalars(n *yaml.Node) bool {
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode && c.Kind != yaml.AliasNode {
			return false
		}
	}
	return true
}
