"""catalyst's tests, laid out as the package is: the tests of `catalyst_dsl/<path>/` are in
`tests/<path>/`, and the tests of the product as a whole sit here at the top.

Every folder of tests is a package, so that pytest names a test module by its path
(`tests.runtime.state.test_state`): two test files of the same name in different folders
never collide, and tests import the shared helpers as `tests.helpers.<module>`.
"""
