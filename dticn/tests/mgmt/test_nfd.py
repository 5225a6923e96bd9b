"""NFD rib management: python-ndn's own command builders and response parser."""

from __future__ import annotations

import pytest
from ndn.app_support import nfd_mgmt
from ndn.encoding import InterestParam, make_interest
from ndn.security import DigestSha256Signer

from dticn.forwarder.face import FaceScope, RecordingFace
from dticn.forwarder.forwarder import Forwarder
from dticn.forwarder.settings import ForwarderConfig
from dticn.mgmt.nfd import NfdManagement
from dticn.packets import Data, decode_packet, name_from_str
from dticn.sim.kernel import EventKernel


def _setup() -> tuple[EventKernel, Forwarder, RecordingFace]:
    kernel = EventKernel()
    fw = Forwarder(kernel)
    NfdManagement(fw)
    app = RecordingFace(scope=FaceScope.LOCAL)
    fw.add_face(app)
    return kernel, fw, app


def _command(verb: str, signed: bool, **kwargs: object) -> bytes:
    if signed:
        name = nfd_mgmt.make_command_v2("rib", verb, None, **kwargs)
        return bytes(make_interest(name, InterestParam(nonce=11, lifetime=1000), app_param=b"",
                                   signer=DigestSha256Signer(for_interest=True)))
    name = nfd_mgmt.make_command("rib", verb, None, **kwargs)
    return bytes(make_interest(name, InterestParam(nonce=12, lifetime=1000)))


def _reply(kernel: EventKernel, app: RecordingFace) -> dict:
    kernel.run(until=kernel.now() + 0.01)
    [wire] = app.take()
    data = decode_packet(wire)
    assert isinstance(data, Data)
    return nfd_mgmt.parse_response(data.content)


@pytest.mark.parametrize("signed", [True, False])
def test_register_and_unregister(signed: bool) -> None:
    kernel, fw, app = _setup()
    app.deliver(_command("register", signed, name="/demo", cost=7))
    resp = _reply(kernel, app)
    assert resp["status_code"] == 200 and resp["face_id"] == app.face_id
    assert resp["cost"] == 7 and resp["status_text"] == "OK"
    entry = fw.fib.find_exact(name_from_str("/demo"))
    assert entry is not None and entry.nexthops[0].face_id == app.face_id
    app.deliver(_command("unregister", signed, name="/demo"))
    assert _reply(kernel, app)["status_code"] == 200
    assert fw.fib.find_exact(name_from_str("/demo")) is None


def test_unknown_command_and_missing_name() -> None:
    kernel, _, app = _setup()
    name = nfd_mgmt.make_command("faces", "create", None, uri="udp://1.2.3.4")
    app.deliver(bytes(make_interest(name, InterestParam(nonce=1))))
    assert _reply(kernel, app)["status_code"] == 501
    app.deliver(_command("register", False, cost=1))
    assert _reply(kernel, app)["status_code"] == 400


def test_non_local_face_cannot_reach_management() -> None:
    kernel, fw, _ = _setup()
    remote = RecordingFace()
    fw.add_face(remote)
    remote.deliver(_command("register", False, name="/evil"))
    kernel.run(until=1.0)
    assert remote.sent == [] and fw.fib.find_exact(name_from_str("/evil")) is None
    assert fw.counters.drops["localhost_violation"] == 1


def test_localhop_registration_from_a_remote_face_is_refused() -> None:
    """Signatures are not verified, so a remote peer may not write our FIB."""
    from ndn.encoding import Component

    kernel, fw, _ = _setup()
    remote = RecordingFace()
    fw.add_face(remote)
    name = nfd_mgmt.make_command("rib", "register", None, name="/evil")
    name[0] = Component.from_str("localhop")
    remote.deliver(bytes(make_interest(name, InterestParam(nonce=3, lifetime=1000))))
    resp = _reply(kernel, remote)
    assert resp["status_code"] == 403 and "local faces" in resp["status_text"]
    assert fw.fib.find_exact(name_from_str("/evil")) is None
    assert fw.counters.drops["registration_not_local"] == 1


def test_routes_per_face_cap_leaves_room_for_other_apps() -> None:
    kernel = EventKernel()
    fw = Forwarder(kernel, ForwarderConfig(routes_per_face=5))
    NfdManagement(fw)
    greedy, other = RecordingFace(scope=FaceScope.LOCAL), RecordingFace(scope=FaceScope.LOCAL)
    fw.add_face(greedy)
    fw.add_face(other)
    codes = []
    for k in range(8):
        greedy.deliver(_command("register", False, name=f"/greedy/{k}"))
        codes.append(_reply(kernel, greedy)["status_code"])
    assert codes == [200] * 5 + [403] * 3
    assert fw.counters.drops["routes_per_face"] == 3
    greedy.deliver(_command("register", False, name="/greedy/0", cost=3))  # update: allowed
    assert _reply(kernel, greedy)["status_code"] == 200
    other.deliver(_command("register", False, name="/other"))
    assert _reply(kernel, other)["status_code"] == 200
    greedy.close()
    assert fw.fib.route_count(greedy.face_id) == 0 and fw.fib.route_count(other.face_id) == 1


def test_status_datasets_nfd_general_and_dticn_json() -> None:
    import json

    from ndn.app_support.nfd_mgmt import GeneralStatus

    kernel = EventKernel()
    fw = Forwarder(kernel)
    NfdManagement(fw, wall_clock=lambda: 1_700_000_000.0)
    app = RecordingFace(scope=FaceScope.LOCAL)
    fw.add_face(app)
    fw.counters.drop("pit_face_quota")
    for uri, nonce in (("/localhost/nfd/status/general", 1), ("/localhost/nfd/status/dticn", 2)):
        app.deliver(bytes(make_interest(uri, InterestParam(
            nonce=nonce, can_be_prefix=True, must_be_fresh=True))))
    kernel.run(until=0.01)
    general, dticn_status = (decode_packet(w) for w in app.take())
    assert isinstance(general, Data) and isinstance(dticn_status, Data)
    st = GeneralStatus.parse(general.content)
    assert st.n_fib_entries == len(fw.fib) and st.start_timestamp == 1_700_000_000_000
    assert st.nfd_version in ("dticn", b"dticn")
    body = json.loads(dticn_status.content)
    assert body["counters"]["drops"] == {"pit_face_quota": 1}
    assert {f["face_id"] for f in body["faces"]} == {1, app.face_id}


def test_route_cap_is_charged_to_the_requesting_face() -> None:
    """Issue 14: registering for another face (NFD's FaceId parameter) used to count
    against that face's cap; the requester pays, and its routes for others go with it."""
    kernel = EventKernel()
    fw = Forwarder(kernel, ForwarderConfig(routes_per_face=2))
    NfdManagement(fw)
    app, other = RecordingFace(scope=FaceScope.LOCAL), RecordingFace(scope=FaceScope.LOCAL)
    fw.add_face(app)
    fw.add_face(other)
    codes = []
    for k in range(3):
        app.deliver(_command("register", False, name=f"/for-other/{k}", face_id=other.face_id))
        codes.append(_reply(kernel, app)["status_code"])
    assert codes == [200, 200, 403]
    assert fw.fib.route_count(other.face_id) == 2
    for k in range(2):  # the other face's own allowance is untouched
        other.deliver(_command("register", False, name=f"/own/{k}"))
        assert _reply(kernel, other)["status_code"] == 200
    app.deliver(_command("register", False, name="/for-other/0", face_id=other.face_id,
                         cost=5))  # an update of a route it holds: no new charge
    assert _reply(kernel, app)["status_code"] == 200
    app.deliver(_command("register", False, name="/nowhere", face_id=4242))
    assert _reply(kernel, app)["status_code"] == 410
    app.deliver(_command("unregister", False, name="/for-other/1", face_id=other.face_id))
    assert _reply(kernel, app)["status_code"] == 200
    app.deliver(_command("register", False, name="/mine"))  # the charge was released
    assert _reply(kernel, app)["status_code"] == 200
    app.close()
    assert fw.fib.find_exact(name_from_str("/for-other/0")) is None
    assert fw.fib.route_count(other.face_id) == 2  # its own two routes


def test_unregister_from_a_remote_face_is_refused() -> None:
    from ndn.encoding import Component

    kernel, fw, app = _setup()
    app.deliver(_command("register", False, name="/kept"))
    assert _reply(kernel, app)["status_code"] == 200
    remote = RecordingFace()
    fw.add_face(remote)
    name = nfd_mgmt.make_command("rib", "unregister", None, name="/kept", face_id=app.face_id)
    name[0] = Component.from_str("localhop")
    remote.deliver(bytes(make_interest(name, InterestParam(nonce=5, lifetime=1000))))
    assert _reply(kernel, remote)["status_code"] == 403
    assert fw.fib.find_exact(name_from_str("/kept")) is not None
