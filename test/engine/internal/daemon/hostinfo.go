package daemon

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
)

// Host facts are read from the machine itself (not through hostfs): they
// describe the host the node runs on, as the kubelet's do.

// nodeInfo is status.nodeInfo for this host and version.
func nodeInfo(version string) kube.NodeSystemInfo {
	machineID := firstLine("/etc/machine-id")
	uuid := firstLine("/sys/class/dmi/id/product_uuid")
	if uuid == "" {
		uuid = machineID
	}
	return kube.NodeSystemInfo{
		MachineID: machineID, SystemUUID: uuid, BootID: firstLine("/proc/sys/kernel/random/boot_id"),
		KernelVersion: kernelRelease(), OSImage: osImage(),
		// No container runtime runs under the test engine; the version
		// says so rather than naming a containerd that is not there.
		ContainerRuntimeVersion: "containerd://0.0.0-cargoship-testengine",
		KubeletVersion:          version, OperatingSystem: runtime.GOOS, Architecture: runtime.GOARCH,
	}
}

// capacity is status.capacity: this host's CPUs and memory.
func capacity() map[string]string {
	c := map[string]string{"cpu": strconv.Itoa(runtime.NumCPU()), "pods": "110", "ephemeral-storage": "10Gi"}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		defer f.Close()
		s := bufio.NewScanner(f)
		for s.Scan() {
			if v, ok := strings.CutPrefix(s.Text(), "MemTotal:"); ok {
				c["memory"] = strings.TrimSuffix(strings.TrimSpace(v), " kB") + "Ki"
			}
		}
	}
	return c
}

func firstLine(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line)
}

func kernelRelease() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return ""
	}
	var b []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

func osImage() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return "Unknown"
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := strings.CutPrefix(string(line), "PRETTY_NAME="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return "Unknown"
}

// hostname is the default node name: the host name, lower-cased.
func hostname() (string, error) {
	h, err := os.Hostname()
	return strings.ToLower(h), err
}

// defaultNodeIP is the address k3s picks without --node-ip: the source
// address of the default route, else the first global unicast address.
func defaultNodeIP() (string, error) {
	if c, err := net.Dial("udp4", "192.0.2.1:9"); err == nil { // no packet is sent
		defer func() { _ = c.Close() }()
		if a, ok := c.LocalAddr().(*net.UDPAddr); ok && !a.IP.IsLoopback() {
			return a.IP.String(), nil
		}
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", err
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.IsGlobalUnicast() && n.IP.To4() != nil {
			return n.IP.String(), nil
		}
	}
	return "", errors.New("unable to find a node IP: no default route and no global unicast address")
}
