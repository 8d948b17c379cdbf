package engine

import "github.com/colonel-byte/cargoship/pkg/shell"

// kubeadm join adds a control-plane node's etcd member as a learner and
// then promotes it, retrying MemberPromote until EtcdAPICall's timeout
// (two minutes). On a loaded host one promotion can time out at the
// client after etcd has made it: every retry then fails with "can only
// promote a learner member", because the member is a voter already, and
// the join fails half-way with a healthy member (kubeadm 1.34 and 1.35,
// util/etcd MemberPromote; docs/reference/engines.md 8). Its etcd-join
// phase is safe to run again: it finds the member, sees it promoted and
// waits for the cluster. So a controller's join that failed that way is
// run once more from that phase on.
const controllerJoinScript = `out=$("$1" join --config "$2" 2>&1) && { printf '%s\n' "$out"; exit 0; }
rc=$?
printf '%s\n' "$out" >&2
case "$out" in
*"can only promote a learner member"*) ;;
*) exit "$rc" ;;
esac
echo "cargoship: kubeadm lost the reply to its etcd learner promotion; joining again from the etcd-join phase" >&2
exec "$1" join --config "$2" --skip-phases=` + joinPhasesDone

// joinPhasesDone are the join phases before etcd-join, as kubeadm 1.34
// and 1.35 name them (cmd/join.go).
const joinPhasesDone = "preflight,control-plane-prepare,check-etcd,kubelet-start"

// joinCommand is kubeadm join with the rendered config: for a controller,
// in controllerJoinScript.
func joinCommand(controller bool) string {
	if !controller {
		return shell.Join(kubeadmBin, "join", "--config", kubeadmConfig)
	}
	return shell.Join("sh", "-c", controllerJoinScript, "sh", kubeadmBin, kubeadmConfig)
}
