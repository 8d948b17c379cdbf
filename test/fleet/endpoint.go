package fleet

import (
	"net"
	"strconv"
)

// defaultPrivateInterface is the interface every container host has its
// address on.
const defaultPrivateInterface = "eth0"

// SSHEndpoint returns where the operator's SSH reaches h: SSHAddress and
// SSHPort when the backend set them, else Address and 22.
func (h Host) SSHEndpoint() (address string, port int) {
	address, port = h.SSHAddress, h.SSHPort
	if address == "" {
		address = h.Address
	}
	if port == 0 {
		port = 22
	}
	return address, port
}

// sshHostPort is SSHEndpoint joined for net.Dial.
func (h Host) sshHostPort() string {
	a, p := h.SSHEndpoint()
	return net.JoinHostPort(a, strconv.Itoa(p))
}

// knownHostsName is how known_hosts names h's SSH endpoint: the bare
// address on port 22, "[address]:port" otherwise (OpenSSH's form).
func (h Host) knownHostsName() string {
	a, p := h.SSHEndpoint()
	if p == 22 {
		return a
	}
	return "[" + a + "]:" + strconv.Itoa(p)
}

// privateInterfaceName is the interface the inventory names for every host.
func (f *Fleet) privateInterfaceName() string {
	if f.PrivateInterface != "" {
		return f.PrivateInterface
	}
	return defaultPrivateInterface
}
