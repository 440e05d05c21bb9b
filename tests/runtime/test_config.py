"""Configuration from the environment and configure()."""
import pytest

import cnrt
from mlusim import device as devices
from mlusim.device import config_from_env, parse_size


def test_defaults():
    config = config_from_env({})
    assert config.arch == "MLU370-X4"
    assert config.devices == 1
    assert config.memory_per_device == 24 * 2**30
    assert not config.blocking and config.poison and config.seed == 0


def test_environment_variables():
    config = config_from_env({"MLUSIM_ARCH": "mlu590-h8", "MLUSIM_DEVICE_COUNT": "3", "MLUSIM_MEMORY": "2GiB",
                              "MLUSIM_BLOCKING": "1", "MLUSIM_POISON": "0", "MLUSIM_SEED": "7"})
    assert (config.arch, config.devices, config.memory_per_device) == ("MLU590-H8", 3, 2 * 2**30)
    assert config.blocking and not config.poison and config.seed == 7


def test_the_two_chip_board_has_two_devices_by_default():
    assert config_from_env({"MLUSIM_ARCH": "MLU370-X8"}).devices == 2


@pytest.mark.parametrize("text, value", [("4GiB", 4 * 2**30), ("512 MiB", 512 * 2**20), ("1.5GB", 1.5e9),
                                         ("1073741824", 2**30), ("64k", 64000)])
def test_parse_size(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize("environ", [{"MLUSIM_ARCH": "MLU999"}, {"MLUSIM_MEMORY": "lots"},
                                     {"MLUSIM_DEVICE_COUNT": "0"}, {"MLUSIM_MEMORY": "12"}])
def test_bad_values_are_rejected(environ):
    with pytest.raises((ValueError, KeyError)):
        config_from_env(environ)


def test_configure_changes_the_board_seen_through_cnrt():
    devices.configure(arch="MLU590-M9", memory=8 << 20, device_count=2)
    assert cnrt.getDeviceCount() == 2
    properties = cnrt.getDeviceProperties(1)
    assert properties.name == "MLU590-M9"
    assert properties.clusterCount == 12
    assert cnrt.memGetInfo() == (8 << 20, 8 << 20)


@pytest.mark.parametrize("text, visible", [("1", (1,)), ("2,0", (2, 0)), ("0, 2", (0, 2)), ("", ()), ("32", ()),
                                           ("1,7,0", (1,)), ("0,0,1", (0,)), ("1,x,2", (1,)), ("-1,0", ())])
def test_mlu_visible_devices_ends_at_the_first_entry_that_is_no_device(text, visible):
    config = config_from_env({"MLUSIM_DEVICE_COUNT": "3", "MLU_VISIBLE_DEVICES": text})
    assert config.devices == 3 and config.visible_devices == visible


def test_visible_devices_get_the_process_ordinals_and_keep_their_identity():
    devices.configure(devices.Config(device_count=3))
    identity = {i: (cnrt.getDeviceProperties(i).uuid, cnrt.deviceGetPCIBusId(i)) for i in range(3)}
    devices.configure(devices.Config(device_count=3, visible=(2, 0)))
    assert cnrt.getDeviceCount() == 2
    assert [device.physical for device in devices.devices()] == [2, 0]
    assert (cnrt.getDeviceProperties(0).uuid, cnrt.deviceGetPCIBusId(0)) == identity[2]
    assert (cnrt.getDeviceProperties(1).uuid, cnrt.deviceGetPCIBusId(1)) == identity[0]
    with pytest.raises(cnrt.CnrtError) as error:
        cnrt.setDevice(2)
    assert error.value.code == cnrt.cnrtErrorDeviceInvalid


def test_no_visible_device_is_cnrt_error_no_device():
    import cndrv
    devices.configure(devices.Config(device_count=2, visible=()))
    assert cnrt.getDeviceCount() == 0
    for call in (cnrt.getDevice, lambda: cnrt.setDevice(0), lambda: cnrt.malloc(16)):
        with pytest.raises(cnrt.CnrtError, match="no device is visible") as error:
            call()
        assert error.value.code == cnrt.cnrtErrorNoDevice
    with pytest.raises(cndrv.CndrvError) as error:
        cndrv.cnInit(0)
    assert error.value.code == cndrv.CN_ERROR_NO_DEVICE


def test_visible_devices_must_be_distinct_devices_of_the_machine():
    for visible in ((0, 0), (2,), (-1,)):
        with pytest.raises(ValueError, match="visible devices"):
            devices.configure(devices.Config(device_count=2, visible=visible))
