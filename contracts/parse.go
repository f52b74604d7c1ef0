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
	if err := decode("", data, &s); err != nil {
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
	return decode("", data, v)
}

// EncodeYAML renders v as YAML with 2-space indent.
func EncodeYAML(v any) ([]byte, error) {
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

func decode(prefix string, data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return Invalidf("%sempty document", prefix)
		}
		return Invalidf("%s%s", prefix, yamlMessage(err))
	}
	if isEmpty(&doc) {
		return Invalidf("%sempty document", prefix)
	}
	for {
		var more yaml.Node
		err := dec.Decode(&more)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Invalidf("%s%s", prefix, yamlMessage(err))
		}
		if !isEmpty(&more) {
			return Invalidf("%sline %d: more than one YAML document", prefix, more.Content[0].Line)
		}
	}
	keepTimestampsAsText(&doc)
	if err := doc.Decode(v); err != nil {
		return Invalidf("%s%s", prefix, yamlMessage(err))
	}
	return nil
}

func isEmpty(doc *yaml.Node) bool {
	return len(doc.Content) == 0 || doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].ShortTag() == "!!null"
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
