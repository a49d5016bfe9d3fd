//! `snowmint.Opaque`: the core's keyed permutation ([`snowmint::Opaque`]) for Python. Converts types and
//! maps errors; the permutation is the core's.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyString};

use snowmint as sm;
use snowmint::ErrorCode;

use crate::{err, layout_arg, raise, str_arg, u64_arg, OrRaise, PyLayout};

/// Encodes IDs into opaque tokens of the same width and back, with a 16-byte secret key.
#[pyclass(frozen, module = "snowmint", name = "Opaque")]
pub(crate) struct PyOpaque {
    inner: sm::Opaque,
    layout: sm::Layout,
}

fn value_arg(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<u64> {
    u64_arg(obj, name, ErrorCode::InvalidId)
}

fn encoding_arg(
    py: Python<'_>,
    e: Option<&Bound<'_, PyAny>>,
    default: &str,
) -> PyResult<Option<sm::Encoding>> {
    let name = match e {
        None => default.to_owned(),
        Some(e) => str_arg(e, "encoding")?.to_cow()?.into_owned(),
    };
    sm::Encoding::from_name_or_any(&name).or_raise(py)
}

impl PyOpaque {
    /// `f` over every int of an iterable, into a new list (an error leaves nothing behind).
    fn map_many<'py>(
        &self,
        values: &Bound<'py, PyAny>,
        name: &str,
        f: fn(&sm::Opaque, u64) -> sm::Result<u64>,
    ) -> PyResult<Bound<'py, PyList>> {
        let py = values.py();
        let mut out: Vec<u64> = Vec::with_capacity(values.len().unwrap_or(0));
        for v in values.try_iter()? {
            out.push(value_arg(&v?, name)?);
        }
        for x in out.iter_mut() {
            *x = f(&self.inner, *x).map_err(|e| err(py, e))?;
        }
        PyList::new(py, out)
    }
}

#[pymethods]
impl PyOpaque {
    #[new]
    #[pyo3(signature = (key, layout = None), text_signature = "(key, layout='twitter')")]
    fn new(
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        layout: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let key: Vec<u8> = if let Ok(b) = key.cast::<PyBytes>() {
            b.as_bytes().to_vec()
        } else if let Ok(b) = key.cast::<PyByteArray>() {
            b.to_vec()
        } else {
            return Err(PyTypeError::new_err(format!(
                "key must be bytes or bytearray (16 bytes), not {}",
                key.get_type().name()?
            )));
        };
        let layout = layout
            .map(layout_arg)
            .transpose()?
            .unwrap_or_else(sm::Layout::twitter);
        let inner = sm::Opaque::for_layout(&key, &layout).map_err(|e| {
            if key.len() != sm::OPAQUE_KEY_LEN {
                raise(py, e.code(), format!("{e} (got {} bytes)", key.len()), &[])
            } else {
                err(py, e)
            }
        })?;
        Ok(PyOpaque { inner, layout })
    }

    /// The token of an ID (an int below ``2 ** bits``).
    fn encode(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<u64> {
        self.inner.encode(value_arg(id, "id")?).or_raise(py)
    }

    /// The ID of a token.
    fn decode(&self, py: Python<'_>, token: &Bound<'_, PyAny>) -> PyResult<u64> {
        self.inner.decode(value_arg(token, "token")?).or_raise(py)
    }

    /// The token of an ID as text ("dec", "hex", "base32", "base58").
    #[pyo3(signature = (id, encoding = None), text_signature = "($self, id, encoding='dec')")]
    fn encode_str(
        &self,
        py: Python<'_>,
        id: &Bound<'_, PyAny>,
        encoding: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let enc = encoding_arg(py, encoding, "dec")?.unwrap_or(sm::Encoding::Decimal);
        let token = self.inner.encode(value_arg(id, "id")?).or_raise(py)?;
        Ok(enc.encode(token).as_str().to_owned())
    }

    /// The ID of a token given as text in one encoding, or "any" (told apart by shape).
    #[pyo3(signature = (text, encoding = None), text_signature = "($self, text, encoding='any')")]
    fn decode_str(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        encoding: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let text = str_arg(text, "text")?.to_cow()?;
        let token =
            sm::Encoding::parse_in(encoding_arg(py, encoding, "any")?, &text).or_raise(py)?;
        self.inner.decode(token).or_raise(py)
    }

    /// The tokens of many IDs (any iterable of ints), as a list.
    fn encode_many<'py>(&self, ids: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        self.map_many(ids, "id", sm::Opaque::encode)
    }

    /// The IDs of many tokens (any iterable of ints), as a list.
    fn decode_many<'py>(&self, tokens: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        self.map_many(tokens, "token", sm::Opaque::decode)
    }

    /// The width in bits: IDs and tokens are the ints below ``2 ** bits``.
    #[getter]
    fn bits(&self) -> u32 {
        self.inner.bits()
    }

    /// The layout whose width this permutation has.
    #[getter]
    fn layout(&self) -> PyLayout {
        PyLayout { inner: self.layout }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let layout = Py::new(py, PyLayout { inner: self.layout })?;
        let layout_repr = layout.bind(py).repr()?;
        Ok(format!(
            "Opaque(key=<secret>, layout={}, bits={})",
            layout_repr.cast::<PyString>()?.to_cow()?,
            self.inner.bits()
        ))
    }
}
