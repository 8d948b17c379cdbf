package kube

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const daemonSet = `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"cni","finalizers":["a","b"]},
	"spec":{"template":{"spec":{
		"containers":[
			{"name":"agent","image":"cni:1","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"ports":[{"containerPort":9099}]},
			{"name":"sidecar","image":"side:1"}],
		"tolerations":[{"operator":"Exists"}],
		"volumes":[{"name":"etc","hostPath":{"path":"/etc/cni"}}]}},
	"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":1}}}}`

// A patch such as kubectl apply computes for a DaemonSet whose image and
// one variable changed: the containers list (merge key name) and its env
// (merge key name) merge element by element, so the sidecar, the other
// variable and the port are kept; $setElementOrder is honoured.
func TestStrategicMergePatchMergesNestedListsByKey(t *testing.T) {
	ds := obj(t, daemonSet)
	got, err := StrategicMergePatch(Schema("apps", "DaemonSet"), ds, obj(t, `{"spec":{"template":{"spec":{
		"$setElementOrder/containers":[{"name":"agent"},{"name":"sidecar"}],
		"containers":[{"name":"agent","image":"cni:2","$setElementOrder/env":[{"name":"A"},{"name":"B"}],"env":[{"name":"B","value":"3"}]}]}}}}`))
	require.NoError(t, err)
	cs := Get(got, "spec.template.spec.containers").([]any)
	require.Len(t, cs, 2)
	agent := cs[0].(map[string]any)
	assert.Equal(t, "cni:2", agent["image"])
	assert.Equal(t, []any{map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "B", "value": "3"}}, agent["env"])
	assert.Equal(t, []any{map[string]any{"containerPort": float64(9099)}}, agent["ports"])
	assert.Equal(t, "side:1", cs[1].(map[string]any)["image"])
	assert.Equal(t, "cni:1", Get(ds, "spec.template.spec.containers").([]any)[0].(map[string]any)["image"], "the target is not changed")
}

// The same patch as a plain merge patch (no merge metadata, as for a
// custom resource) replaces the list.
func TestStrategicMergePatchWithoutSchemaReplacesLists(t *testing.T) {
	got, err := StrategicMergePatch(nil, obj(t, daemonSet), obj(t, `{"spec":{"template":{"spec":{"containers":[{"name":"agent","image":"cni:2"}]}}}}`))
	require.NoError(t, err)
	assert.Equal(t, []any{map[string]any{"name": "agent", "image": "cni:2"}}, Get(got, "spec.template.spec.containers"))
}

func TestStrategicMergePatchDirectives(t *testing.T) {
	s := Schema("apps", "DaemonSet")
	for _, tc := range []struct {
		name, patch string
		check       func(t *testing.T, got Object)
	}{
		{"a list element marked delete is removed", `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}`,
			func(t *testing.T, got Object) {
				cs := Get(got, "spec.template.spec.containers").([]any)
				require.Len(t, cs, 1)
				assert.Equal(t, "agent", cs[0].(map[string]any)["name"])
			}},
		{"$patch: replace in a list makes the patch the list", `{"spec":{"template":{"spec":{"volumes":[{"name":"run","emptyDir":{}},{"$patch":"replace"}]}}}}`,
			func(t *testing.T, got Object) {
				assert.Equal(t, []any{map[string]any{"name": "run", "emptyDir": map[string]any{}}}, Get(got, "spec.template.spec.volumes"))
			}},
		{"$patch: replace in a map replaces it", `{"spec":{"updateStrategy":{"$patch":"replace","type":"OnDelete"}}}`,
			func(t *testing.T, got Object) {
				assert.Equal(t, map[string]any{"type": "OnDelete"}, Get(got, "spec.updateStrategy"))
			}},
		{"$patch: delete in a map removes it", `{"spec":{"updateStrategy":{"$patch":"delete"}}}`,
			func(t *testing.T, got Object) { assert.Nil(t, Get(got, "spec.updateStrategy")) }},
		{"$retainKeys drops the keys it does not list", `{"spec":{"updateStrategy":{"$retainKeys":["type"],"type":"OnDelete"}}}`,
			func(t *testing.T, got Object) {
				assert.Equal(t, map[string]any{"type": "OnDelete"}, Get(got, "spec.updateStrategy"))
			}},
		{"finalizers merge as a set, $deleteFromPrimitiveList removes", `{"metadata":{"finalizers":["c","a"],"$deleteFromPrimitiveList/finalizers":["b"]}}`,
			func(t *testing.T, got Object) { assert.Equal(t, []any{"a", "c"}, Get(got, "metadata.finalizers")) }},
		{"tolerations have no merge key: replaced", `{"spec":{"template":{"spec":{"tolerations":[{"key":"k","operator":"Exists"}]}}}}`,
			func(t *testing.T, got Object) {
				assert.Equal(t, []any{map[string]any{"key": "k", "operator": "Exists"}}, Get(got, "spec.template.spec.tolerations"))
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := StrategicMergePatch(s, obj(t, daemonSet), obj(t, tc.patch))
			require.NoError(t, err)
			tc.check(t, got)
		})
	}
	_, err := StrategicMergePatch(s, obj(t, daemonSet), obj(t, `{"spec":{"$patch":"sideways"}}`))
	require.Error(t, err, "an unknown $patch is refused")
}

// A Service's ports merge on port, a container's on containerPort: the
// same field name, two keys.
func TestSchemaKnowsTheContextOfAField(t *testing.T) {
	svc := obj(t, `{"spec":{"ports":[{"port":80,"name":"http"},{"port":443,"name":"https"}]}}`)
	got, err := StrategicMergePatch(Schema("", "Service"), svc, obj(t, `{"spec":{"ports":[{"port":443,"name":"tls"}]}}`))
	require.NoError(t, err)
	assert.Equal(t, []any{map[string]any{"port": float64(80), "name": "http"}, map[string]any{"port": float64(443), "name": "tls"}}, Get(got, "spec.ports"))
	assert.Nil(t, Schema("helm.cattle.io", "HelmChart"), "custom resources have no strategic merge metadata")
	assert.NotNil(t, Schema("rbac.authorization.k8s.io", "ClusterRole").child("metadata"), "every built-in kind has metadata's")
}

// ThreeWayMerge is an apply: what the file sets wins, what it dropped
// since the last apply goes, what only the server set stays.
func TestThreeWayMerge(t *testing.T) {
	original := obj(t, `{"metadata":{"name":"cni","labels":{"a":"1","gone":"x"}},"spec":{"template":{"spec":{
		"containers":[{"name":"agent","image":"cni:1","env":[{"name":"A","value":"1"},{"name":"OLD","value":"x"}]},{"name":"old"}]}}}}`)
	current := obj(t, `{"metadata":{"name":"cni","uid":"u","labels":{"a":"1","gone":"x","server":"y"}},"spec":{"revisionHistoryLimit":10,"template":{"spec":{
		"containers":[{"name":"agent","image":"cni:1","imagePullPolicy":"IfNotPresent","env":[{"name":"A","value":"1"},{"name":"OLD","value":"x"},{"name":"INJECTED","value":"i"}]},{"name":"old"},{"name":"injected"}]}}},
		"status":{"numberReady":1}}`)
	modified := obj(t, `{"metadata":{"name":"cni","labels":{"a":"2"}},"spec":{"template":{"spec":{
		"containers":[{"name":"agent","image":"cni:2","env":[{"name":"A","value":"1"}]}]}}}}`)

	got := ThreeWayMerge(Schema("apps", "DaemonSet"), original, modified, current)
	assert.Equal(t, map[string]string{"a": "2", "server": "y"}, StrMap(got, "metadata.labels"))
	assert.Equal(t, "u", Str(got, "metadata.uid"))
	assert.InDelta(t, 10, Get(got, "spec.revisionHistoryLimit"), 0)
	assert.InDelta(t, 1, Get(got, "status.numberReady"), 0)
	cs := Get(got, "spec.template.spec.containers").([]any)
	require.Len(t, cs, 2, "the dropped container goes, the server's stays")
	agent := cs[0].(map[string]any)
	assert.Equal(t, "cni:2", agent["image"])
	assert.Equal(t, "IfNotPresent", agent["imagePullPolicy"])
	assert.Equal(t, []any{map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "INJECTED", "value": "i"}}, agent["env"])
	assert.Equal(t, "injected", cs[1].(map[string]any)["name"])

	again := ThreeWayMerge(Schema("apps", "DaemonSet"), modified, modified, got)
	assert.True(t, Equal(got, again), "applying the same file again changes nothing")

	// A custom resource's lists are replaced.
	crd := ThreeWayMerge(nil, obj(t, `{"spec":{"set":["a"]}}`), obj(t, `{"spec":{"set":["b"]}}`), obj(t, `{"spec":{"set":["a","c"]}}`))
	assert.Equal(t, []any{"b"}, Get(crd, "spec.set"))
}
