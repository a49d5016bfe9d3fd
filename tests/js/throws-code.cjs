// The one error assertion of every JavaScript test of both packages (CommonJS, so the native package's
// CommonJS tests can require it; ES modules import it): `fn` throws a real Error of class `cls` (default
// Error) whose `code` is `code`, with a message; returns the error. `what` labels the case in failures.
'use strict'

function throwsCode(assert, fn, code, cls = Error, what = '') {
  const label = what ? `${what}: ` : ''
  let caught
  try {
    fn()
  } catch (e) {
    caught = e
  }
  assert.ok(caught !== undefined, `${label}expected an error with code ${code}, nothing was thrown`)
  assert.ok(
    caught instanceof cls,
    `${label}expected a ${cls.name}, got ${Object.prototype.toString.call(caught)}: ${caught}`,
  )
  assert.equal(caught.code, code, `${label}expected code ${code}, got ${caught.code}: ${caught.message}`)
  assert.ok(typeof caught.message === 'string' && caught.message.length > 0, `${label}an empty message`)
  return caught
}

module.exports = { throwsCode }
