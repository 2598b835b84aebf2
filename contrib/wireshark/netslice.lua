-- SPDX-License-Identifier: GPL-2.0
--
-- NetSlice for Wireshark: the per-layer latencies nsdump --export pcapng
-- writes with each packet, as fields to filter on:
--
--   tshark -X lua_script:netslice.lua -r trace.pcapng -Y 'netslice.region.queue > 50'
--
-- netslice.region.<name> is a region's value in microseconds (a double, to
-- the nanosecond), corrected for the macros' cost where nsdump corrected
-- it; one occurrence per record of that region (OPEN records have none).
-- The payload's layout (version 1) is in nsdump(8) and nsdump/view/pcapopt.h.
--
-- Where the payload comes from: nsdump writes it as a custom option
-- (code 2989, PEN 32473) and, base64 after "netslice1:", as a second
-- packet comment.  Wireshark 4.0 (Debian 12) keeps custom options through
-- editcap and mergecap but shows them to no dissector, Lua included, so
-- this post-dissector reads the comment (frame.comment), which any
-- Wireshark shows.  Installed by `make install` into Wireshark's global
-- Lua plugin folder (tshark -G folders: "Global Lua Plugins"); a copy in
-- ~/.local/lib/wireshark/plugins/ works for one user.

local netslice = Proto("netslice", "NetSlice per-layer latency")

-- include/netslice.h's enum nsl_region, as nsdump names them
local regions = {
	[1] = "write", [2] = "tcp", [3] = "ip", [4] = "link", [5] = "nic",
	[6] = "rx-nic", [7] = "rx-link", [8] = "rx-ip", [9] = "rx-tcp",
	[10] = "queue", [11] = "copy", [12] = "sndq", [13] = "qdisc",
	[14] = "backlog", [15] = "sk-backlog", [16] = "udp", [17] = "rx-udp",
}
local kinds = { [1] = "block", [2] = "event record", [3] = "loss" }
local dirs = { [0] = "tx", [1] = "rx" }
-- NSL_BF_*, NSL_RF_*, NSL_EVF_*: bit i is names[i + 1]
local block_flags = { "RETRANS", "GSO", "NOXMIT", "TRUNC", "LOOPBACK", "RX",
	"ABSORBED", "RESENT", "FORWARDED", "COPY", "COALESCED", "DEVTRUNC" }
local record_flags = { "OPEN", "INVALID", "MIGRATED", "MERGED", "GAP", "SHARED" }
local event_flags = { "TCP", "IP", "ADDR", "TSO", "ADDR6" }

local F = {
	version = ProtoField.uint8("netslice.version", "Layout version"),
	kind = ProtoField.uint8("netslice.kind", "Kind", base.DEC, kinds),
	length = ProtoField.uint16("netslice.length", "Payload length"),
	cpu = ProtoField.uint32("netslice.cpu", "Ring CPU"),
	seq = ProtoField.uint64("netslice.seq", "Sequence"),
	conn = ProtoField.uint64("netslice.conn", "Connection", base.HEX),
	flags = ProtoField.uint32("netslice.flags", "Block flags", base.HEX),
	len = ProtoField.uint32("netslice.len", "Length from the network header"),
	tcp_seq = ProtoField.uint32("netslice.tcp_seq", "TCP sequence"),
	segs = ProtoField.uint16("netslice.segs", "Segments"),
	dir = ProtoField.uint8("netslice.dir", "Direction", base.DEC, dirs),
	nrec = ProtoField.uint8("netslice.nrec", "Records"),
	ndev = ProtoField.uint8("netslice.ndev", "Devices"),
	nevents = ProtoField.uint8("netslice.nevents", "Counters"),
	corrected = ProtoField.bool("netslice.corrected", "Values corrected"),
	dev = ProtoField.string("netslice.dev", "Device path"),
	dev_ifindex = ProtoField.uint32("netslice.dev.ifindex", "Device ifindex"),
	dev_netns = ProtoField.uint32("netslice.dev.netns", "Device network namespace"),
	dev_dir = ProtoField.uint8("netslice.dev.dir", "Device direction", base.DEC, dirs),
	dev_first = ProtoField.uint8("netslice.dev.first", "Device's first record"),
	record = ProtoField.none("netslice.record", "Record"),
	rec_region = ProtoField.uint8("netslice.record.region", "Region", base.DEC, regions),
	rec_depth = ProtoField.uint8("netslice.record.depth", "Depth"),
	rec_flags = ProtoField.uint16("netslice.record.flags", "Record flags", base.HEX),
	rec_cpu = ProtoField.uint16("netslice.record.cpu", "CPU at START"),
	rec_nmerged = ProtoField.uint16("netslice.record.nmerged", "Intervals"),
	rec_start = ProtoField.double("netslice.record.start", "Start from NSI (us)"),
	rec_raw = ProtoField.double("netslice.record.raw", "Raw (us)"),
	rec_us = ProtoField.double("netslice.record.us", "Value (us)"),
	rec_count = ProtoField.uint64("netslice.record.count", "Counter"),
	counter = ProtoField.string("netslice.counter", "Counter name"),
	ev_type = ProtoField.uint32("netslice.event.type", "Event type"),
	ev_name = ProtoField.string("netslice.event", "Event"),
	ev_bytes = ProtoField.uint32("netslice.event.bytes", "Bytes"),
	ev_flags = ProtoField.uint32("netslice.event.flags", "Event flags", base.HEX),
	loss_first = ProtoField.uint64("netslice.loss.first_seq", "First sequence lost"),
	loss_lost = ProtoField.uint64("netslice.loss.lost", "Items lost"),
}

-- a boolean per flag: netslice.flags.retrans, netslice.record.flags.open, ...
local function flag_fields(prefix, names, bits)
	local list = {}
	for i, name in ipairs(names) do
		local f = ProtoField.bool(prefix .. "." .. name:lower(), name, bits,
			nil, 2 ^ (i - 1))
		list[i] = f
		F[prefix .. "." .. name] = f
	end
	return list
end
local block_flag_f = flag_fields("netslice.flags", block_flags, 32)
local record_flag_f = flag_fields("netslice.record.flags", record_flags, 16)
local event_flag_f = flag_fields("netslice.event.flags", event_flags, 32)

-- netslice.region.<name>: the value to filter on
local region_f = {}
for id, name in pairs(regions) do
	region_f[id] = ProtoField.double("netslice.region." .. name, name .. " (us)")
	F["region." .. name] = region_f[id]
end

local fields = {}
for _, f in pairs(F) do
	fields[#fields + 1] = f
end
netslice.fields = fields

local comment_f = Field.new("frame.comment")

local function add_flags(tree, field, flag_f, range)
	local t = tree:add(field, range)
	for _, f in ipairs(flag_f) do
		t:add(f, range)
	end
end

local function us(range)
	return range:uint64():tonumber() / 1000
end

-- One record at @at; the offset after it.
local function record(tvb, tree, at, nevents, names)
	local id = tvb(at, 1):uint()
	local name = regions[id] or ("region " .. id)
	local open = bit.band(tvb(at + 2, 2):uint(), 1) ~= 0
	local size = 32 + 8 * nevents
	local t = tree:add(F.record, tvb(at, size))
	t:set_text(name .. (open and " open" or string.format(" %.3f us", us(tvb(at + 24, 8)))))
	t:add(F.rec_region, tvb(at, 1))
	t:add(F.rec_depth, tvb(at + 1, 1))
	add_flags(t, F.rec_flags, record_flag_f, tvb(at + 2, 2))
	t:add(F.rec_cpu, tvb(at + 4, 2))
	t:add(F.rec_nmerged, tvb(at + 6, 2))
	t:add(F.rec_start, tvb(at + 8, 8), us(tvb(at + 8, 8)))
	t:add(F.rec_raw, tvb(at + 16, 8), us(tvb(at + 16, 8)))
	t:add(F.rec_us, tvb(at + 24, 8), us(tvb(at + 24, 8)))
	for e = 0, nevents - 1 do
		local r = tvb(at + 32 + 8 * e, 8)
		t:add(F.rec_count, r):set_text(names[e + 1] .. ": " .. tostring(r:uint64()))
	end
	if not open and region_f[id] then
		tree:add(region_f[id], tvb(at + 24, 8), us(tvb(at + 24, 8)))
	end
	return at + size
end

-- The counters' names at the payload's end, after the device path.
local function counter_names(tvb, at, nevents)
	local names = {}
	for e = 1, nevents do
		local n = tvb(at, 1):uint()
		names[e] = n > 0 and tvb(at + 1, n):string() or ""
		at = at + 1 + n
	end
	return names
end

local function block(tvb, tree)
	local nrec, ndev, nevents = tvb(39, 1):uint(), tvb(40, 1):uint(), tvb(41, 1):uint()
	local pathlen = tvb(43, 1):uint()
	local recs = 44 + 12 * ndev
	local path_at = recs + nrec * (32 + 8 * nevents)
	tree:add(F.seq, tvb(8, 8))
	tree:add(F.conn, tvb(16, 8))
	add_flags(tree, F.flags, block_flag_f, tvb(24, 4))
	tree:add(F.len, tvb(28, 4))
	tree:add(F.tcp_seq, tvb(32, 4))
	tree:add(F.segs, tvb(36, 2))
	tree:add(F.dir, tvb(38, 1))
	tree:add(F.nrec, tvb(39, 1))
	tree:add(F.ndev, tvb(40, 1))
	tree:add(F.nevents, tvb(41, 1))
	tree:add(F.corrected, tvb(42, 1))
	if pathlen > 0 then
		tree:add(F.dev, tvb(path_at, pathlen))
	end
	for i = 0, ndev - 1 do
		local at = 44 + 12 * i
		tree:add(F.dev_ifindex, tvb(at, 4))
		tree:add(F.dev_netns, tvb(at + 4, 4))
		tree:add(F.dev_dir, tvb(at + 8, 1))
		tree:add(F.dev_first, tvb(at + 9, 1))
	end
	local names = counter_names(tvb, path_at + pathlen, nevents)
	for _, name in ipairs(names) do
		tree:add(F.counter, name)
	end
	local at = recs
	for _ = 1, nrec do
		at = record(tvb, tree, at, nevents, names)
	end
end

local function event(tvb, tree)
	tree:add(F.seq, tvb(8, 8))
	tree:add(F.conn, tvb(16, 8))
	tree:add(F.ev_type, tvb(24, 4))
	tree:add(F.ev_bytes, tvb(28, 4))
	add_flags(tree, F.ev_flags, event_flag_f, tvb(32, 4))
	local n = tvb(36, 1):uint()
	if n > 0 then
		tree:add(F.ev_name, tvb(37, n))
	end
end

local function loss(tvb, tree)
	tree:add(F.loss_first, tvb(8, 8))
	tree:add(F.loss_lost, tvb(16, 8))
end

local by_kind = { [1] = block, [2] = event, [3] = loss }

local function payload(tvb, tree)
	if tvb:len() < 8 or tvb(0, 1):uint() ~= 1 then
		return		-- a layout this script does not know
	end
	local t = tree:add(netslice, tvb())
	t:add(F.version, tvb(0, 1))
	t:add(F.kind, tvb(1, 1))
	t:add(F.length, tvb(2, 2))
	t:add(F.cpu, tvb(4, 4))
	local what = by_kind[tvb(1, 1):uint()]
	if what then
		what(tvb, t)
	end
end

function netslice.dissector(_, pinfo, tree)
	for _, c in ipairs({ comment_f() }) do
		local b64 = tostring(c.value):match("^netslice1:([A-Za-z0-9+/=]+)$")
		if b64 then
			local bytes = ByteArray.new(b64, true):base64_decode()
			payload(bytes:tvb("NetSlice payload"), tree)
			pinfo.cols.protocol:append("/NetSlice")
		end
	end
end

register_postdissector(netslice)
