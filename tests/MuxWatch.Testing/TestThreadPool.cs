namespace MuxWatch.Testing;

/// <summary>
/// A test process runs many tests at once, some of them blocking (synchronous Redis calls, child
/// processes). Its pool minimum is raised so that "busy above minimum" and "reply not read in time"
/// in a live test mean what the test provoked, not a busy test runner.
/// </summary>
public static class TestThreadPool
{
    /// <summary>Raises the worker and I/O minimum to at least 64 threads.</summary>
    public static void EnsureRoomy()
    {
        ThreadPool.GetMinThreads(out var worker, out var io);
        ThreadPool.SetMinThreads(Math.Max(worker, 64), Math.Max(io, 64));
    }
}
