package contracts

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// The seed format's open mappings: a seed-format state file keeps its
// agents and its handoffs in one mapping each, with as many keys as the
// board has agents (a board of 50,000 tasks may have thousands). YAML's
// decoder looks for a duplicate key by comparing every key of a mapping
// with every other: a hostile file of 150,000 keys in one mapping kept the
// operator's own import busy for minutes. So those two mappings are taken
// out of the document before it is decoded: their keys are checked for
// duplicates through a set, and each value is decoded on its own. Every
// other mapping is held to MaxMappingKeys, as in any state file.

// openMapping is one of the open mappings taken out of a document.
type openMapping struct {
	key  string     // "agents" or "handoff"
	node *yaml.Node // the mapping
}

// openMappings are the open mappings of one document.
type openMappings []openMapping

// takeOpenMappings takes the open mappings out of doc (a document node),
// leaving an empty mapping in the place of each, after checking their keys:
// scalars, each once, and their values, as firstRefused checks a file's.
func takeOpenMappings(doc *yaml.Node) (openMappings, error) {
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil // not a mapping: the decoder says what is wrong
	}
	top := doc.Content[0]
	var out openMappings
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value != "agents" && k.Value != "handoff" || v.Kind != yaml.MappingNode {
			continue
		}
		seen := make(map[string]int, len(v.Content)/2)
		for j := 0; j+1 < len(v.Content); j += 2 {
			key, val := v.Content[j], v.Content[j+1]
			if key.Kind != yaml.ScalarNode || key.ShortTag() == "!!merge" {
				// A merge key (<<) would merge its mapping's entries in:
				// a name is a key of its own.
				return nil, Invalidf("line %d: a key of %s is not a name", key.Line, k.Value)
			}
			if line, dup := seen[key.Value]; dup {
				return nil, Invalidf("line %d: mapping key %q already defined at line %d", key.Line, key.Value, line)
			}
			seen[key.Value] = key.Line
			if a := firstRefused(val, MaxMappingKeys); a != nil {
				return nil, refused("", a, MaxMappingKeys)
			}
			keepTimestampsAsText(val)
		}
		out = append(out, openMapping{key: k.Value, node: v})
		top.Content[i+1] = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: v.Line, Column: v.Column}
	}
	return out, nil
}

// into decodes the open mappings into s, entry by entry.
func (o openMappings) into(s *State) error {
	var err error
	for _, m := range o {
		switch m.key {
		case "agents":
			s.Agents, err = entries[Agent](m.node)
		case "handoff":
			s.Handoff, err = entries[Handoff](m.node)
		default:
			panic(fmt.Sprintf("open mapping %q", m.key))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// entries decodes mapping n, whose keys takeOpenMappings checked, value
// by value.
func entries[T any](n *yaml.Node) (map[string]*T, error) {
	out := make(map[string]*T, len(n.Content)/2)
	for j := 0; j+1 < len(n.Content); j += 2 {
		var v *T
		if err := n.Content[j+1].Decode(&v); err != nil {
			return nil, Invalidf("%s", yamlMessage(err))
		}
		out[n.Content[j].Value] = v
	}
	return out, nil
}
