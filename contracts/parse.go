package contracts

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ParseState decodes a seed-format state.yaml. Errors are exit-1 *Errors
// whose message names the line, e.g. "line 7: ..."; callers name the file.
func ParseState(data []byte) (*State, error) {
	var s State
	// A seed-format file keeps the agents and the handoffs in one mapping
	// each, as many as the board has: those two are decoded entry by entry
	// (openMappings), every other mapping is capped as in any state file.
	doc, err := parseDoc("", data)
	if err != nil {
		return nil, err
	}
	open, err := takeOpenMappings(doc)
	if err != nil {
		return nil, err
	}
	if err := decodeDoc("", doc, &s, MaxMappingKeys); err != nil {
		return nil, err
	}
	if err := open.into(&s); err != nil {
		return nil, err
	}
	return &s, nil
}

// MarshalState renders s in the seed's state.yaml shape, with 2-space indent.
func MarshalState(s *State) ([]byte, error) {
	return EncodeYAML(s)
}

// ParseTask decodes one task. Error messages start with the line; callers
// name the file.
func ParseTask(data []byte) (*Task, error) {
	var t Task
	if err := DecodeYAML(data, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// MarshalTask renders one task as YAML, with 2-space indent.
func MarshalTask(t *Task) ([]byte, error) {
	return EncodeYAML(t)
}

// DecodeYAML decodes a single non-empty YAML document into v. Errors are
// exit-1 *Errors on one line that start with the line number.
func DecodeYAML(data []byte, v any) error {
	if decodeCanon(data, v) {
		if crossCheck.Load() {
			checkDecode(data, v)
		}
		return nil
	}
	return decode("", data, v, MaxMappingKeys)
}

// MaxMappingKeys bounds the keys of one mapping in a state file. The
// decoder compares a mapping's keys pair by pair for duplicates, so a
// mapping of n keys costs n²/2 comparisons: a single mapping of 100,000
// keys in a file of 1 MiB took about a minute to decode. The mappings of
// the files git-liza writes hold a few dozen keys (the agents and the
// handoffs have a file each).
const MaxMappingKeys = 1000

// EncodeYAML renders v as YAML with 2-space indent.
func EncodeYAML(v any) ([]byte, error) {
	if b, ok := encodeCanon(v); ok {
		if crossCheck.Load() {
			checkEncode(v, b)
		}
		return b, nil
	}
	return encodeLibrary(v)
}

// encodeLibrary is EncodeYAML by the library alone.
func encodeLibrary(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decode(prefix string, data []byte, v any, maxKeys int) error {
	doc, err := parseDoc(prefix, data)
	if err != nil {
		return err
	}
	return decodeDoc(prefix, doc, v, maxKeys)
}

// parseDoc reads the one YAML document data holds (an empty one, or more
// than one, is an error).
func parseDoc(prefix string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Invalidf("%sempty document", prefix)
		}
		return nil, Invalidf("%s%s", prefix, yamlMessage(err))
	}
	if isEmpty(&doc) {
		return nil, Invalidf("%sempty document", prefix)
	}
	for {
		var more yaml.Node
		err := dec.Decode(&more)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, Invalidf("%s%s", prefix, yamlMessage(err))
		}
		if !isEmpty(&more) {
			return nil, Invalidf("%sline %d: more than one YAML document", prefix, more.Content[0].Line)
		}
	}
	return &doc, nil
}

// decodeDoc decodes doc into v, once it holds nothing a state file may not
// (firstRefused).
func decodeDoc(prefix string, doc *yaml.Node, v any, maxKeys int) error {
	if a := firstRefused(doc, maxKeys); a != nil {
		return refused(prefix, a, maxKeys)
	}
	keepTimestampsAsText(doc)
	if err := doc.Decode(v); err != nil {
		return Invalidf("%s%s", prefix, yamlMessage(err))
	}
	return nil
}

func isEmpty(doc *yaml.Node) bool {
	return len(doc.Content) == 0 || doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].ShortTag() == "!!null"
}

// firstRefused is the first node under n that a state file may not hold,
// nil when there is none: an alias, and a mapping of more than maxKeys
// keys (0: any number). git-liza writes no alias, and a value an alias
// names is decoded once and shared but written out again in full at every
// place that names it: a file of a hundred KB could be hundreds of MB at
// its next write (or a guard's comparison), so a state file with an alias
// is refused. For mappings, see MaxMappingKeys.
func firstRefused(n *yaml.Node, maxKeys int) *yaml.Node {
	if n.Kind == yaml.AliasNode || n.Kind == yaml.MappingNode && maxKeys > 0 && len(n.Content)/2 > maxKeys {
		return n
	}
	for _, c := range n.Content {
		if a := firstRefused(c, maxKeys); a != nil {
			return a
		}
	}
	return nil
}

// refused is the error of a node firstRefused found.
func refused(prefix string, a *yaml.Node, maxKeys int) error {
	if a.Kind == yaml.AliasNode {
		return Invalidf("%sline %d: an alias (*%s): a state file names each value where it stands, with no YAML aliases", prefix, a.Line, a.Value)
	}
	return Invalidf("%sline %d: a mapping of %d keys: a state file's mappings hold at most %d", prefix, a.Line, len(a.Content)/2, maxKeys)
}

// keepTimestampsAsText makes untagged timestamps plain strings, so that
// unknown fields decoded into Extra keep their text exactly.
func keepTimestampsAsText(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Style&yaml.TaggedStyle == 0 && n.ShortTag() == "!!timestamp" {
		n.Tag = "!!str"
	}
	for _, c := range n.Content {
		keepTimestampsAsText(c)
	}
}

// yamlMessage turns a yaml.v3 error into one line that starts with the
// line number when the library gives one.
func yamlMessage(err error) string {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) {
		msg = strings.Join(te.Errors, "; ")
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	return strings.Join(strings.Fields(msg), " ")
}
