// A C++ program that runs Python itself and mixes the two APIs on the same simulated device: memory allocated in
// C is written from Python; a queue made in Python is used from C; a BANG kernel written in Python is launched
// from C with cnrtInvokeKernel; a cnnl descriptor made in C is used by a Python op.
//   mixed REPOSITORY     (the directory holding tests/neuware/c_kernels.py)
#include <Python.h>

#include <cnnl.h>
#include <vector>

#include "check.h"

static PyObject *globals;

// Runs Python source in one namespace; false (and the traceback printed) when it raised.
static bool python(const char *source) {
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject *result = PyRun_String(source, Py_file_input, globals, globals);
  if (result == nullptr) PyErr_Print();
  Py_XDECREF(result);
  PyGILState_Release(gil);
  return result != nullptr;
}

static unsigned long long python_int(const char *name) {
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject *value = PyDict_GetItemString(globals, name);
  unsigned long long number = value ? PyLong_AsUnsignedLongLong(value) : 0;
  PyGILState_Release(gil);
  return number;
}

static void set_python_pointer(const char *name, const void *pointer) {
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject *value = PyLong_FromVoidPtr(const_cast<void *>(pointer));
  PyDict_SetItemString(globals, name, value);
  Py_DECREF(value);
  PyGILState_Release(gil);
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  // This process runs Python before any simulator call: the libraries join this interpreter.
  Py_Initialize();
  globals = PyDict_New();
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  PyObject *directory = PyUnicode_FromString(argv[1]);
  PyDict_SetItemString(globals, "repository", directory);
  Py_DECREF(directory);
  PyThreadState *main_thread = PyEval_SaveThread();

  // 1. C allocates; Python (the same simulator) writes; C reads.
  enum { N = 4096 };
  void *x = nullptr, *y = nullptr;
  OK(cnrtMalloc(&x, N * sizeof(float)));
  OK(cnrtMalloc(&y, N * sizeof(float)));
  set_python_pointer("x", x);
  set_python_pointer("y", y);
  EXPECT(python("import numpy as np, cnrt, cnnl, sys\n"
                "import neuware as capi\n"
                "assert cnrt.pointerGetAttributes(x).type == cnrt.cnrtMemTypeDevice\n"
                "cnrt.memcpy(x, np.arange(4096, dtype=np.float32), 4096 * 4, cnrt.cnrtMemcpyHostToDev)\n"
                "cnrt.memcpy(y, np.full(4096, 0.5, np.float32), 4096 * 4, cnrt.cnrtMemcpyHostToDev)\n"),
         "Python writes the C allocation");
  std::vector<float> host(N);
  OK(cnrtMemcpy(host.data(), x, N * sizeof(float), cnrtMemcpyDevToHost));
  EXPECT(host[0] == 0 && host[4095] == 4095, "C reads what Python wrote: %g %g", host[0], host[4095]);

  // 2. A queue made in Python, handed to C.
  EXPECT(python("queue = cnrt.queueCreate()\nqueue_handle = capi.to_c(queue)\n"), "Python makes a queue");
  cnrtQueue_t queue = reinterpret_cast<cnrtQueue_t>(python_int("queue_handle"));
  EXPECT(queue != nullptr, "queue handle");

  // 3. Kernels written in Python, launched from C with the kernel<<<>>> argument convention.
  EXPECT(python("sys.path.insert(0, repository)\nfrom tests.neuware import c_kernels\n"
                "kernel_handle = capi.export_kernel(c_kernels.scale_add, c_kernels.SCALE_ADD_TYPES)\n"
                "bang_handle = capi.export_kernel(c_kernels.scalar_at, c_kernels.SCALAR_AT_TYPES)\n"),
         "Python exports kernels");
  const void *kernel = reinterpret_cast<const void *>(python_int("kernel_handle"));
  float factor = 2.0f;
  int count = N;
  void *args[] = {&x, &y, &factor, &count};
  cnrtDim3_t dim = {4, 1, 1};
  OK(cnrtInvokeKernel(kernel, dim, cnrtFuncTypeUnion1, args, 0, queue));
  OK(cnrtQueueSync(queue));
  OK(cnrtMemcpy(host.data(), y, N * sizeof(float), cnrtMemcpyDevToHost));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += host[i] != 2.0f * i + 0.5f;
  EXPECT(bad == 0, "%d kernel results wrong (y[3] = %g)", bad, host[3]);
  int not_a_kernel = 0;
  FAILS_WITH(cnrtInvokeKernel(&not_a_kernel, dim, cnrtFuncTypeUnion1, args, 0, queue), cnrtErrorInvalidKernel,
             "export_kernel");

  // the v4 form: the arguments by value into a params buffer
  cnrtKernelParamsBuffer_t params = nullptr;
  OK(cnrtGetKernelParamsBuffer(&params));
  OK(cnrtKernelParamsBufferAddParam(params, &x, sizeof x));
  OK(cnrtKernelParamsBufferAddParam(params, &y, sizeof y));
  OK(cnrtKernelParamsBufferAddParam(params, &factor, sizeof factor));
  OK(cnrtKernelParamsBufferAddParam(params, &count, sizeof count));
  OK(cnrtInvokeKernel_V2(kernel, dim, params, cnrtFuncTypeUnion1, queue));
  OK(cnrtSyncQueue(queue));
  OK(cnrtDestroyKernelParamsBuffer(params));
  OK(cnrtMemcpy(host.data(), y, N * sizeof(float), cnrtMemcpyDevToHost));
  bad = 0;
  for (int i = 0; i < N; i++) bad += host[i] != 4.0f * i + 0.5f;
  EXPECT(bad == 0, "%d results of the v4 launch wrong (y[3] = %g)", bad, host[3]);

  // a BANG kernel (task model, GDRAM pointers checked by the simulator)
  const void *bang_kernel = reinterpret_cast<const void *>(python_int("bang_handle"));
  int index = 17;
  void *bang_args[] = {&y, &index};
  OK(cnrtInvokeKernel(bang_kernel, dim, cnrtFuncTypeUnion1, bang_args, 0, queue));
  OK(cnrtQueueSync(queue));
  OK(cnrtMemcpy(host.data(), y, N * sizeof(float), cnrtMemcpyDevToHost));
  EXPECT(host[17] == 1.0f && host[16] == 4.0f * 16 + 0.5f, "BANG kernel wrote y[17] = %g", host[17]);

  // 4. A descriptor and handle made in C, used by a Python op on C's memory.
  cnnlHandle_t handle = nullptr;
  cnnlTensorDescriptor_t desc = nullptr;
  OK(cnnlCreate(&handle));
  OK(cnnlSetQueue(handle, queue));
  OK(cnnlCreateTensorDescriptor(&desc));
  int dims[1] = {N};
  OK(cnnlSetTensorDescriptor(desc, CNNL_LAYOUT_ARRAY, CNNL_DTYPE_FLOAT, 1, dims));
  set_python_pointer("handle_address", handle);
  set_python_pointer("desc_address", desc);
  EXPECT(python("h, d = capi.from_c(handle_address), capi.from_c(desc_address)\n"
                "assert cnnl.getQueue(h) is queue\n"
                "cnnl.negTensor(h, d, x, d, y)\n"
                "cnrt.queueSync(queue)\n"),
         "Python runs an op with C's handle and descriptor");
  OK(cnrtMemcpy(host.data(), y, N * sizeof(float), cnrtMemcpyDevToHost));
  EXPECT(host[0] == 0 && host[10] == -10, "negated by Python: %g", host[10]);
  OK(cnnlDestroyTensorDescriptor(desc));
  EXPECT(python("try:\n    cnnl.negTensor(h, d, x, d, y)\nexcept cnnl.CnnlError as e:\n    destroyed = 'destroyed' in str(e)\n"),
         "Python sees C's destroy");
  EXPECT(python_int("destroyed") == 1, "the destroyed descriptor is reported as destroyed");
  OK(cnnlDestroy(handle));

  OK(cnrtFree(x));
  OK(cnrtFree(y));
  EXPECT(python("cnrt.queueDestroy(queue)\n"), "Python destroys its queue");
  FAILS_WITH(cnrtQueueSync(queue), cnrtErrorInvalidResourceHandle, "destroyed");
  PyEval_RestoreThread(main_thread);
  Py_DECREF(globals);
  DONE();
}
