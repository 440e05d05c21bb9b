"""IRTTensor: a run-time tensor (inputs from Context.create_inputs, outputs from enqueue), on the host or the MLU."""
from __future__ import annotations

import numbers
import weakref

import numpy as np

import cnrt

from ..dims import Dims, dims_arg
from ..dtypes import numpy_of
from ..enums import DataType, TensorLocation
from ..status import Code, MagicMindError, Status


def _free_later(address: int) -> None:
    try:
        cnrt.free(address)
    except Exception:  # the device table was rebuilt: the block went with it
        pass


class IRTTensor:
    """magicmind::IRTTensor. `from_numpy` fills it on the host (converting to its type), `to(dev)` moves it to a
    device, `asnumpy()` reads it back."""

    def __init__(self, name: str, data_type: DataType, dims: Dims, location: TensorLocation = TensorLocation.kHost):
        self._name = name
        self._dtype = data_type
        self._dims = dims
        self._location = location
        self._host = None
        self._address = 0
        self._device = None
        self._owned = None
        #: the data is device memory the caller gave (set_data): an enqueue writes outputs there
        self.user_memory = False

    # ---- metadata ----------------------------------------------------------------------------------------------

    def get_name(self) -> str:
        return self._name

    def get_data_type(self) -> DataType:
        """IRTTensor::GetDataType()."""
        return self._dtype

    def get_dimensions(self) -> Dims:
        """IRTTensor::GetDimensions()."""
        return self._dims

    @property
    def shape(self) -> list:
        return self._dims.GetDims()

    @property
    def dtype(self) -> DataType:
        return self._dtype

    def set_dimensions(self, dims) -> Status:
        """IRTTensor::SetDimensions(dims): the shape of the next enqueue (mutable models)."""
        try:
            new = dims_arg(dims, "set_dimensions")
        except MagicMindError as error:
            return error.status
        if new.HasUnknownDim():
            return Status(Code.INVALID_ARGUMENT, f"set_dimensions: {new.GetDims()} holds -1")
        if self._host is not None and tuple(self._host.shape) != new.as_tuple():
            self._host = None
        self._dims = new
        return Status()

    def get_size(self) -> int:
        """IRTTensor::GetSize(): bytes of its data."""
        count = self._dims.GetElementCount()
        return max(count, 0) * numpy_of(self._dtype).itemsize

    def get_memory_location(self) -> TensorLocation:
        """IRTTensor::GetMemoryLocation()."""
        return self._location

    # ---- data --------------------------------------------------------------------------------------------------

    def from_numpy(self, array) -> Status:
        """Copy a numpy array in, converted to the tensor's type (a float64 image into a UINT8 input, int64 ids
        into INT32 ones, as the samples rely on); its shape becomes the tensor's."""
        try:
            source = np.asarray(array)
        except Exception:
            return Status(Code.INVALID_ARGUMENT, f"from_numpy: {type(array).__name__} is not an array")
        if source.dtype == object or source.dtype.kind not in "biuf":
            return Status(Code.INVALID_ARGUMENT, f"from_numpy: dtype {source.dtype} has no MagicMind type")
        target = numpy_of(self._dtype)
        with np.errstate(all="ignore"):
            self._host = np.array(source, dtype=target, order="C", copy=True)
        self._dims = Dims(self._host.shape)
        self._release_device()
        self._location = TensorLocation.kHost
        return Status()

    def to(self, device) -> Status:
        """Move the data to a device (an mm.Device or its index): the next enqueue reads it there."""
        index = getattr(device, "id", device)
        if isinstance(index, bool) or not isinstance(index, numbers.Integral):
            return Status(Code.INVALID_ARGUMENT, f"to: {device!r} is not a device")
        if self._host is None:
            if self._location == TensorLocation.kMLU:
                return Status()
            return Status(Code.FAILED_PRECONDITION, f"to: tensor {self._name!r} holds no data (from_numpy first)")
        previous = cnrt.getDevice()
        try:
            cnrt.setDevice(int(index))
            data = self._host
            address = cnrt.malloc(max(data.nbytes, 1))
            cnrt.memcpy(address, data, data.nbytes, cnrt.cnrtMemcpyHostToDev) if data.nbytes else None
        except cnrt.CnrtError as error:
            return Status(Code.INVALID_ARGUMENT, f"to: device {index}: {error}")
        finally:
            cnrt.setDevice(previous)
        self._own(address, int(index))
        self._host = None
        return Status()

    def set_data(self, address) -> Status:
        """IRTTensor::SetData(ptr): use device memory the caller owns (an int address from cnrtMalloc)."""
        if isinstance(address, bool) or not isinstance(address, numbers.Integral) or address <= 0:
            return Status(Code.INVALID_ARGUMENT, f"set_data: {address!r} is not a device address")
        from mlusim.device import owner_of
        owner = owner_of(int(address))
        if owner is None:
            return Status(Code.INVALID_ARGUMENT, f"set_data: 0x{int(address):x} is not a device address")
        self._release_device()
        self._host = None
        self._address, self._device, self._location = int(address), owner.index, TensorLocation.kMLU
        self.user_memory = True
        return Status()

    def get_mutable_data(self):
        """IRTTensor::GetMutableData(): the device address (an int) of a tensor on the MLU (0 until it has data),
        else its host array."""
        if self._location == TensorLocation.kMLU:
            return self._address
        if self._host is None:
            self._host = np.zeros(self._dims.as_tuple(), numpy_of(self._dtype))
        return self._host

    def asnumpy(self) -> np.ndarray:
        """The data as a new numpy array (waits for nothing: sync the queue first, as on hardware)."""
        dtype = numpy_of(self._dtype)
        if self._location == TensorLocation.kHost:
            if self._host is None:
                raise MagicMindError(Code.FAILED_PRECONDITION, f"asnumpy: tensor {self._name!r} holds no data")
            return self._host.copy()
        out = np.empty(self._dims.as_tuple(), dtype)
        if out.nbytes:
            cnrt.memcpy(out, self._address, out.nbytes, cnrt.cnrtMemcpyDevToHost)
        return out

    def destroy(self) -> Status:
        """IRTTensor::Destroy()."""
        self._release_device()
        self._host = None
        return Status()

    # ---- internals ---------------------------------------------------------------------------------------------

    def _own(self, address: int, device: int) -> None:
        self._release_device()
        self._address, self._device, self._location = address, device, TensorLocation.kMLU
        self.user_memory = False
        self._owned = weakref.finalize(self, _free_later, address)

    def _release_device(self) -> None:
        if self._owned is not None:
            self._owned()
            self._owned = None
        if self._location == TensorLocation.kMLU:
            self._address, self._device = 0, None
            self._location = TensorLocation.kHost
        self.user_memory = False

    @property
    def host_array(self):
        return self._host

    @property
    def device_address(self) -> int:
        return self._address if self._location == TensorLocation.kMLU else 0

    @property
    def device_index(self):
        return self._device

    def __repr__(self) -> str:
        return f"<IRTTensor {self._name!r} {self._dtype.name} {self._dims.GetDims()} {self._location.name}>"
