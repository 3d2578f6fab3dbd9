package gemini

import (
	"errors"
	"fmt"
	"strings"
)

// Gemini's function parameters are an OpenAPI 3.0 Schema subset, not JSON
// Schema: convertSchema keeps the keywords Gemini accepts, rewrites the
// ones it has its own spelling for, and drops the rest ($schema, $id,
// additionalProperties, patternProperties, examples, ...).

// keptKeywords are the Schema fields Gemini accepts, kept as they are.
var keptKeywords = map[string]bool{
	"description": true, "title": true, "enum": true, "nullable": true,
	"minItems": true, "maxItems": true, "minimum": true, "maximum": true,
	"minLength": true, "maxLength": true, "pattern": true, "default": true,
	"example": true, "minProperties": true, "maxProperties": true,
	"propertyOrdering": true,
}

// formats Gemini knows per type; others are dropped.
var formats = map[string]map[string]bool{
	"string":  {"enum": true, "date-time": true},
	"integer": {"int32": true, "int64": true},
	"number":  {"float": true, "double": true},
}

// maxSchemaDepth bounds nesting and $ref expansion (a recursive type
// cannot be expressed without references, which Gemini lacks).
const maxSchemaDepth = 32

// convertSchema converts a decoded JSON Schema. It returns nil for an
// object schema without properties: Gemini rejects an OBJECT with empty
// properties, and a function without parameters simply omits them.
func convertSchema(schema any) (map[string]any, error) {
	root, ok := schema.(map[string]any)
	if !ok {
		return nil, errors.New("the schema is not a JSON object")
	}
	out, err := convertNode(root, root, 0)
	if err != nil {
		return nil, err
	}
	if props, _ := out["properties"].(map[string]any); out["type"] == "object" && len(props) == 0 {
		return nil, nil
	}
	return out, nil
}

func convertNode(node, root map[string]any, depth int) (map[string]any, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("nested deeper than %d levels (a recursive $ref?)", maxSchemaDepth)
	}
	if ref, ok := node["$ref"].(string); ok {
		target, err := resolve(ref, root)
		if err != nil {
			return nil, err
		}
		merged := map[string]any{}
		for k, v := range target {
			merged[k] = v
		}
		for k, v := range node { // siblings of $ref (a description) win
			if k != "$ref" {
				merged[k] = v
			}
		}
		node = merged
		depth++
	}
	out := map[string]any{}
	for k, v := range node {
		if keptKeywords[k] {
			out[k] = v
		}
	}
	if c, ok := node["const"]; ok {
		out["enum"] = []any{c}
	}
	switch t := node["type"].(type) {
	case string:
		out["type"] = t
	case []any:
		var types []string
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				types = append(types, s)
			} else if s == "null" {
				out["nullable"] = true
			}
		}
		switch len(types) {
		case 0:
		case 1:
			out["type"] = types[0]
		default:
			var alts []any
			for _, s := range types {
				alts = append(alts, map[string]any{"type": s})
			}
			out["anyOf"] = alts
		}
	}
	if f, ok := node["format"].(string); ok {
		if t, _ := out["type"].(string); formats[t][f] {
			out["format"] = f
		}
	}
	if props, ok := node["properties"].(map[string]any); ok {
		conv := map[string]any{}
		for name, p := range props {
			pm, ok := p.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("property %q is not a schema object", name)
			}
			c, err := convertNode(pm, root, depth+1)
			if err != nil {
				return nil, fmt.Errorf("property %q: %w", name, err)
			}
			conv[name] = c
		}
		if len(conv) > 0 {
			out["properties"] = conv
		}
		if req, ok := node["required"].([]any); ok {
			var kept []any
			for _, r := range req {
				if s, ok := r.(string); ok && conv[s] != nil {
					kept = append(kept, s)
				}
			}
			if len(kept) > 0 {
				out["required"] = kept
			}
		}
	}
	if items, ok := node["items"].(map[string]any); ok {
		c, err := convertNode(items, root, depth+1)
		if err != nil {
			return nil, fmt.Errorf("items: %w", err)
		}
		out["items"] = c
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		list, ok := node[key].([]any)
		if !ok {
			continue
		}
		var conv []any
		for i, s := range list {
			sm, ok := s.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s[%d] is not a schema object", key, i)
			}
			if t, _ := sm["type"].(string); t == "null" {
				out["nullable"] = true
				continue
			}
			c, err := convertNode(sm, root, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", key, i, err)
			}
			conv = append(conv, c)
		}
		switch len(conv) {
		case 0:
		case 1: // anyOf [X, null]: just a nullable X
			for k, v := range conv[0].(map[string]any) {
				if _, set := out[k]; !set {
					out[k] = v
				}
			}
		default:
			out["anyOf"] = conv
		}
	}
	return out, nil
}

// resolve finds a local reference (#/$defs/Name or #/definitions/Name).
func resolve(ref string, root map[string]any) (map[string]any, error) {
	path, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, fmt.Errorf("$ref %q is not local to the schema", ref)
	}
	var cur any = root
	for _, seg := range strings.Split(path, "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
		if cur, ok = m[seg]; !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
	}
	m, ok := cur.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("$ref %q is not a schema object", ref)
	}
	return m, nil
}
