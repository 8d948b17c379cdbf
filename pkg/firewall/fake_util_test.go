package firewall

import (
	"encoding/base64"
	"encoding/json"
)

func jsonMarshal(v any) ([]byte, error)   { return json.Marshal(v) }
func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
func must[T any](v T, err error) T        { must0(err); return v }
func must0(err error) {
	if err != nil {
		panic(err)
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) + "\n" }
