package podnet

import (
	"encoding/json"
	"strings"
)

// statusMessage is the message of a v1 Status object, what the API server
// answers an error with, or the body's first 200 bytes if it is not one.
func statusMessage(body []byte) string {
	var s struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
		Reason  string `json:"reason"`
	}
	if json.Unmarshal(body, &s) == nil && s.Kind == "Status" && s.Message != "" {
		if s.Reason != "" {
			return s.Reason + ": " + s.Message
		}
		return s.Message
	}
	m := strings.TrimSpace(string(body))
	if len(m) > 200 {
		m = m[:200] + "…"
	}
	return m
}
