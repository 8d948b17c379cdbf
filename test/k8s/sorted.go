package k8s

import "sort"

// sortedKeys are a map's keys in order, so what is built from a map comes
// out the same every time.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
