# SPDX-License-Identifier: GPL-2.0
"""The devices a block crossed (ABI 6) as the views should name them,
worked out here from the raw fields nsdump --json gives ("devices":
ifindex, netns, dir, first), not from nsdump's own naming: the checks of
--html and --export compare against it."""
import socket


def dev_text(d, ours=None):
    """"if9@4026531840/tx"; with @ours (a live capture in namespace
    @ours), the device's name where it is one of ours and resolves."""
    name = None
    if ours is not None and d["netns"] in (0, ours):
        try:
            name = socket.if_indextoname(d["ifindex"])
        except OSError:
            pass
    if name is None:
        name = "if%d@%d" % (d["ifindex"], d["netns"]) if d["netns"] else "if%d" % d["ifindex"]
    return "%s/%s" % (name, d["dir"])


def path(block, ours=None):
    """The devices in the order crossed, '>' between; "" for none."""
    p = ">".join(dev_text(d, ours) for d in block["devices"])
    return p + ">..." if p and "DEVTRUNC" in block["flags"] else p


def record_devs(block, ours=None):
    """Each record's device by the ABI's rule: the last device whose first
    record is at or before it; records before them all, the first's.
    None for every record of a block without devices."""
    devs = block["devices"]
    out = []
    for k in range(len(block["records"])):
        at = [i for i, d in enumerate(devs) if d["first"] <= k]
        out.append(dev_text(devs[at[-1] if at else 0], ours) if devs else None)
    return out
