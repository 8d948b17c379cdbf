package container

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/cargoship/test/fleet"
)

// TestNodeRuntimeKubelet_Root runs a real kubelet (v1.35.4, standalone:
// static pods, no API server) on two NodeRuntime hosts, one with the
// systemd cgroup driver (kubeadm's default) and one with cgroupfs, each
// over Debian's containerd through its CRI. Each runs a static pod with a
// 64 MiB limit: the pod is Running and ready, and its limit is in the
// host's own memory cgroup as this machine sees it. Down then leaves no
// process, mount or cgroup.
func TestNodeRuntimeKubelet_Root(t *testing.T) {
	c := newRootBackend(t)
	const name = "rtkubelet"
	kubelet := kubeletBinary(t)
	debs := nodeDebs(t, c)
	image := probeImage(t)
	assertSysctlsKept(t) // after Down: cleanups run last-registered first
	f := upForTest(t, c, fleet.Spec{Name: name, Control: 1, Worker: 1, Image: ImageBase, NodeRuntime: true})
	drivers := map[string]string{"kc0": "systemd", "kw0": "cgroupfs"}
	for _, h := range f.Hosts {
		t.Run(h.Name+"/"+drivers[h.Name], func(t *testing.T) {
			driver := drivers[h.Name]
			installContainerd(t, f, h.Name, debs, image, driver == "systemd")
			upload(t, f, h.Name, kubelet, "/usr/local/bin/kubelet", 0o755)
			run(t, f, h.Name, fleet.UserRoot, "mkdir -p /etc/kubernetes/manifests && cat > /var/lib/kubelet/config.yaml <<'EOF'\n"+kubeletConfig(driver)+"EOF\n"+
				"cat > /etc/kubernetes/manifests/probe.yaml <<'EOF'\n"+probePod+"EOF\n"+
				"systemd-run --unit=kubelet /usr/local/bin/kubelet --config=/var/lib/kubelet/config.yaml")
			pod := waitPodRunning(t, f, h)
			if got := run(t, f, h.Name, fleet.UserRoot, "cat /proc/sys/vm/overcommit_memory /proc/sys/kernel/panic_on_oops"); got != "1\n1" {
				t.Errorf("%s: kubelet's sysctls in the host: %q, want 1 and 1", h.Name, got)
			}
			mem := hostCgroup(t, name, h.Name, "memory")
			dir := podCgroup(t, mem, pod.uid)
			if got := readTrim(t, filepath.Join(dir, "memory.limit_in_bytes")); got != "67108864" {
				t.Errorf("%s: the pod's memory.limit_in_bytes = %s, want 67108864 (64Mi)", h.Name, got)
			}
			t.Logf("%s (%s driver): pod %s Running; its cgroup here: %s", h.Name, driver, pod.name, dir)
		})
	}
	downLeavesNothing(t, c, name, f.Dir)
}

// kubeletConfig is a standalone kubelet's configuration: static pods only,
// the read-only port for the test to read them from, and what cgroup v1
// needs (failCgroupV1: false). The default cgroupRoot (/) is the host's own
// cgroup, through its cgroup namespace.
func kubeletConfig(driver string) string {
	return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: ` + driver + `
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
staticPodPath: /etc/kubernetes/manifests
readOnlyPort: 10255
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
`
}

// probePod is the static pod: host network (a standalone kubelet has no
// CNI), the probe image as it was imported (never pulled), 64 MiB.
const probePod = `apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: default}
spec:
  hostNetwork: true
  containers:
  - name: probe
    image: ` + probeRef + `
    imagePullPolicy: Never
    resources:
      limits: {memory: 64Mi, cpu: 100m}
`

type podSeen struct{ name, uid string }

// waitPodRunning polls the kubelet's read-only /pods until the probe pod's
// container runs and is ready; on timeout it fails with the kubelet's and
// containerd's logs.
func waitPodRunning(t *testing.T, f *fleet.Fleet, h fleet.Host) podSeen {
	t.Helper()
	url := "http://" + h.Address + ":10255/pods"
	client := &http.Client{Timeout: 3 * time.Second}
	deadline := time.Now().Add(3 * time.Minute)
	last := "kubelet not answering"
	for time.Now().Before(deadline) {
		if p, state, err := probePodState(client, url); err != nil {
			last = err.Error()
		} else if state == "running ready" {
			return p
		} else {
			last = state
		}
		time.Sleep(time.Second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	logs, _, _ := f.Run(ctx, h.Name, fleet.UserRoot, "journalctl -u kubelet -u containerd -n 60 --no-pager")
	t.Fatalf("%s: the static pod did not run within 3m (last: %s); logs:\n%s", h.Name, last, logs)
	return podSeen{}
}

// probePodState reads the probe pod from a kubelet's /pods.
func probePodState(client *http.Client, url string) (podSeen, string, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return podSeen{}, "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return podSeen{}, "", err
	}
	defer resp.Body.Close()
	var list struct {
		Items []struct {
			Metadata struct{ Name, UID string }
			Status   struct {
				Phase             string
				ContainerStatuses []struct {
					Ready bool
					State map[string]json.RawMessage
				}
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return podSeen{}, "", fmt.Errorf("GET %s: %w", url, err)
	}
	for _, p := range list.Items {
		if !strings.HasPrefix(p.Metadata.Name, "probe-") {
			continue
		}
		seen := podSeen{name: p.Metadata.Name, uid: p.Metadata.UID}
		for _, cs := range p.Status.ContainerStatuses {
			if _, ok := cs.State["running"]; ok && cs.Ready {
				return seen, "running ready", nil
			}
		}
		return seen, "pod phase " + p.Status.Phase, nil
	}
	return podSeen{}, "no probe pod yet", nil
}

// podCgroup finds a pod's cgroup below a host's: kubepods/pod<uid> with
// cgroupfs, kubepods.slice/kubepods-pod<uid>.slice with systemd (dashes in
// the uid become underscores).
func podCgroup(t *testing.T, hostDir, uid string) string {
	t.Helper()
	want := "pod" + strings.ReplaceAll(uid, "-", "_")
	var found string
	_ = filepath.WalkDir(hostDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && found == "" {
			base := strings.TrimSuffix(d.Name(), ".slice")
			if base == "pod"+uid || strings.HasSuffix(base, "-"+want) {
				found = p
				return filepath.SkipAll
			}
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no cgroup for pod %s below %s", uid, hostDir)
	}
	return found
}

// kubeletSysctls are the machine-wide sysctls a kubelet sets at start
// (protectKernelDefaults: false); a NodeRuntime host has copies of its own.
var kubeletSysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
}

// assertSysctlsKept checks, when the test ends, that no kubelet changed
// this machine's values, and puts back any that did.
func assertSysctlsKept(t *testing.T) {
	t.Helper()
	saved := map[string]string{}
	for _, k := range kubeletSysctls {
		saved[k] = readTrim(t, "/proc/sys/"+k)
	}
	t.Cleanup(func() {
		for k, v := range saved {
			if now := readTrim(t, "/proc/sys/"+k); now != v {
				t.Errorf("this machine's %s went from %s to %s", k, v, now)
				if err := os.WriteFile("/proc/sys/"+k, []byte(v), 0o644); err != nil {
					t.Errorf("restore %s=%s: %v", k, v, err)
				}
			}
		}
	})
}
