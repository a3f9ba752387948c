export default async function setup() {
  console.log('GLOBAL SETUP', process.pid, process.env.HS_MARK)
  process.env.HS_MARK = String(Number(process.env.HS_MARK ?? 0) + 1)
  return () => console.log('GLOBAL TEARDOWN')
}
