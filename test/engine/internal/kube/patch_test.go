package kube

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func obj(t *testing.T, s string) Object {
	t.Helper()
	var o Object
	require.NoError(t, json.Unmarshal([]byte(s), &o))
	return o
}

// kubectl label sends a merge patch; a null removes the key.
func TestMergePatchSetsAndRemovesLabels(t *testing.T) {
	n := obj(t, `{"metadata":{"name":"n","labels":{"a":"1","b":"2"}}}`)
	got := MergePatch(n, obj(t, `{"metadata":{"labels":{"a":null,"c":"3"}}}`))
	assert.Equal(t, map[string]string{"b": "2", "c": "3"}, StrMap(got, "metadata.labels"))
	assert.Equal(t, "1", StrMap(n, "metadata.labels")["a"], "the original is not changed")
}

// kubectl uncordon sends {"spec":{"unschedulable":null}}; the kubelet
// patches status.conditions, merged by type.
func TestStrategicMergePatch(t *testing.T) {
	n := obj(t, `{"spec":{"unschedulable":true},"status":{"conditions":[
		{"type":"Ready","status":"True","lastTransitionTime":"t0"},
		{"type":"DiskPressure","status":"False"}]}}`)
	got, err := StrategicMergePatch(Schema("", "Node"), n, obj(t, `{"spec":{"unschedulable":null},"status":{"$setElementOrder/conditions":[{"type":"Ready"}],
		"conditions":[{"type":"Ready","status":"Unknown"},{"type":"PIDPressure","status":"False"},{"type":"DiskPressure","$patch":"delete"}]}}`))
	require.NoError(t, err)
	assert.Nil(t, Get(got, "spec.unschedulable"))
	conds := Get(got, "status.conditions").([]any)
	require.Len(t, conds, 2)
	assert.Equal(t, map[string]any{"type": "Ready", "status": "Unknown", "lastTransitionTime": "t0"}, conds[0])
	assert.Equal(t, "PIDPressure", conds[1].(map[string]any)["type"])
}

func TestJSONPatch(t *testing.T) {
	n := obj(t, `{"metadata":{"labels":{"a":"1"}},"spec":{"taints":[{"key":"x"}]}}`)
	got, err := JSONPatch(n, []JSONPatchOp{
		{Op: "add", Path: "/metadata/labels/b~1c", Value: "2"},
		{Op: "replace", Path: "/metadata/labels/a", Value: "9"},
		{Op: "add", Path: "/spec/taints/-", Value: map[string]any{"key": "y"}},
		{Op: "remove", Path: "/spec/taints/0"},
		{Op: "test", Path: "/metadata/labels/a", Value: "9"},
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "9", "b/c": "2"}, StrMap(got, "metadata.labels"))
	assert.Equal(t, []any{map[string]any{"key": "y"}}, Get(got, "spec.taints"))

	_, err = JSONPatch(n, []JSONPatchOp{{Op: "remove", Path: "/metadata/labels/nope"}})
	require.Error(t, err)
	_, err = JSONPatch(n, []JSONPatchOp{{Op: "test", Path: "/metadata/labels/a", Value: "2"}})
	require.Error(t, err)
}
