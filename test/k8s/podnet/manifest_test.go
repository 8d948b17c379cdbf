package podnet

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// object is the part of a manifest object the test reads.
type object struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	Rules []struct {
		APIGroups []string `yaml:"apiGroups"`
		Resources []string `yaml:"resources"`
		Verbs     []string `yaml:"verbs"`
	} `yaml:"rules"`
	RoleRef struct {
		Kind string `yaml:"kind"`
		Name string `yaml:"name"`
	} `yaml:"roleRef"`
	Subjects []struct {
		Kind      string `yaml:"kind"`
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"subjects"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				ServiceAccountName string              `yaml:"serviceAccountName"`
				HostNetwork        bool                `yaml:"hostNetwork"`
				PriorityClassName  string              `yaml:"priorityClassName"`
				Tolerations        []map[string]string `yaml:"tolerations"`
				Containers         []struct {
					Image           string `yaml:"image"`
					ImagePullPolicy string `yaml:"imagePullPolicy"`
					Env             []struct {
						Name      string `yaml:"name"`
						ValueFrom struct {
							FieldRef struct {
								FieldPath string `yaml:"fieldPath"`
							} `yaml:"fieldRef"`
						} `yaml:"valueFrom"`
					} `yaml:"env"`
					SecurityContext struct {
						Capabilities struct {
							Add []string `yaml:"add"`
						} `yaml:"capabilities"`
					} `yaml:"securityContext"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
				Volumes []struct {
					Name     string `yaml:"name"`
					HostPath struct {
						Path string `yaml:"path"`
					} `yaml:"hostPath"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func decodeManifest(t *testing.T, b []byte) map[string]object {
	t.Helper()
	objs := map[string]object{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var o object
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			return objs
		}
		require.NoError(t, err)
		objs[o.Kind] = o
	}
}

func TestManifest(t *testing.T) {
	const ref = "cargoship.test/podnet:0123456789ab"
	objs := decodeManifest(t, Manifest(ref))
	require.Len(t, objs, 4)
	for kind, o := range objs {
		assert.Equal(t, "podnet", o.Metadata.Name, kind)
		if kind == "ServiceAccount" || kind == "DaemonSet" {
			assert.Equal(t, "kube-system", o.Metadata.Namespace, kind)
		}
	}

	cr := objs["ClusterRole"]
	require.Len(t, cr.Rules, 1)
	assert.Equal(t, []string{""}, cr.Rules[0].APIGroups)
	assert.Equal(t, []string{"nodes"}, cr.Rules[0].Resources)
	assert.Equal(t, []string{"get", "list", "watch"}, cr.Rules[0].Verbs)

	crb := objs["ClusterRoleBinding"]
	assert.Equal(t, "ClusterRole", crb.RoleRef.Kind)
	assert.Equal(t, "podnet", crb.RoleRef.Name)
	require.Len(t, crb.Subjects, 1)
	assert.Equal(t, "ServiceAccount", crb.Subjects[0].Kind)
	assert.Equal(t, "podnet", crb.Subjects[0].Name)
	assert.Equal(t, "kube-system", crb.Subjects[0].Namespace)

	ds := objs["DaemonSet"]
	assert.Equal(t, "apps/v1", ds.APIVersion)
	assert.Equal(t, ds.Spec.Selector.MatchLabels, ds.Spec.Template.Metadata.Labels)
	ps := ds.Spec.Template.Spec
	assert.Equal(t, "podnet", ps.ServiceAccountName)
	assert.True(t, ps.HostNetwork)
	assert.Equal(t, "system-node-critical", ps.PriorityClassName)
	assert.Equal(t, []map[string]string{{"operator": "Exists"}}, ps.Tolerations, "tolerates every taint")
	require.Len(t, ps.Containers, 1)
	c := ps.Containers[0]
	assert.Equal(t, ref, c.Image)
	assert.Equal(t, "IfNotPresent", c.ImagePullPolicy)
	require.Len(t, c.Env, 1)
	assert.Equal(t, "NODE_NAME", c.Env[0].Name)
	assert.Equal(t, "spec.nodeName", c.Env[0].ValueFrom.FieldRef.FieldPath)
	assert.Equal(t, []string{"NET_ADMIN"}, c.SecurityContext.Capabilities.Add)
	require.Len(t, c.VolumeMounts, 1)
	assert.Equal(t, "/etc/cni/net.d", c.VolumeMounts[0].MountPath)
	require.Len(t, ps.Volumes, 1)
	assert.Equal(t, c.VolumeMounts[0].Name, ps.Volumes[0].Name)
	assert.Equal(t, "/etc/cni/net.d", ps.Volumes[0].HostPath.Path)
}

// The reference is one YAML string whatever it holds.
func TestManifestQuotesTheImage(t *testing.T) {
	ref := "registry.local:5000/podnet@sha256:" + string(bytes.Repeat([]byte("a"), 64))
	ds := decodeManifest(t, Manifest(ref))["DaemonSet"]
	assert.Equal(t, ref, ds.Spec.Template.Spec.Containers[0].Image)
	ds = decodeManifest(t, Manifest("x: y # z"))["DaemonSet"]
	assert.Equal(t, "x: y # z", ds.Spec.Template.Spec.Containers[0].Image)
}
