"""cndev.h and cn_api.h from C (programs/cndev_cndrv.c): CNDev's device queries and CNDrv's devices, contexts and
memory agree with cnrt.h on the same simulated devices, and bad calls get their status codes."""


def test_cndev_and_cndrv_program(programs):
    result = programs.run("cndev_cndrv.c")
    assert "0 failure(s)" in result.stdout


def test_two_devices(programs):
    """Device ordinals and handles past the first device (MLUSIM_DEVICES=2)."""
    from .conftest import clean_environment
    result = programs.run("cndev_cndrv.c", env=clean_environment(MLUSIM_DEVICES="2"))
    assert "0 failure(s)" in result.stdout


def test_context_configuration_and_memory_attributes(programs):
    """programs/cndrv_config.c: cnGetCtxConfigParam / cnSetCtxConfigParam (board defaults, per context, the two
    settings agree), cnGetCtxMaxParallelUnionTasks, cnQueueGetContext, cnMallocConstant, cnGetMemAttribute."""
    result = programs.run("cndrv_config.c")
    assert "0 failure(s)" in result.stdout, result.stdout


def test_board_figures(programs):
    """programs/cndev_figures.c: cndevGetDDRInfo, cndevGetFrequencyInfo, cndevGetDeviceMaxPerformance agree with
    CNRT's attributes of the same board; version kept; bad arguments."""
    result = programs.run("cndev_figures.c")
    assert "0 failure(s)" in result.stdout, result.stdout
