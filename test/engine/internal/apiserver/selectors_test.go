package apiserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
)

func TestSelectors(t *testing.T) {
	pod := kube.Object{
		"metadata": map[string]any{"name": "p", "namespace": "kube-system", "labels": map[string]any{"app": "web", "tier": "a"}},
		"spec":     map[string]any{"nodeName": "wrk1"},
	}
	for sel, want := range map[string]bool{
		"app=web": true, "app==web": true, "app!=web": false, "app": true, "!app": false,
		"tier in (a,b)": true, "tier notin (a)": false, "app=web,tier=b": false, "missing": false, "": true,
	} {
		s, err := parseLabelSelector(sel)
		require.NoError(t, err, sel)
		assert.Equal(t, want, filter{labels: s}.match(pod), sel)
	}
	for sel, want := range map[string]bool{
		"spec.nodeName=wrk1": true, "spec.nodeName=wrk2": false,
		"metadata.namespace=kube-system,metadata.name=p": true, "spec.nodeName!=wrk1": false,
	} {
		s, err := parseFieldSelector(sel)
		require.NoError(t, err, sel)
		assert.Equal(t, want, filter{fields: s}.match(pod), sel)
	}
}
