using System.Diagnostics.Tracing;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing.Etlx;
using MuxWatch.Reading;

namespace MuxWatch.Sources;

/// <summary>
/// Samples this process's managed stacks through an EventPipe session on itself (what <c>dotnet-stack</c> does from
/// outside): the runtime's sample profiler for a short while, then the rundown that names every method; TraceEvent
/// resolves the stacks. Each thread's newest sample is its stack. Blocks its caller: call it on a thread of its own.
/// </summary>
internal static class EventPipeStacks
{
    /// <summary>The most a trace may grow while sampling before the session is stopped early (a process with thousands of threads).</summary>
    internal const long MaxSampleBytes = 32L * 1024 * 1024;

    /// <summary>
    /// The runtime's buffer for the session, allocated as events wait to be read: the rundown that names every
    /// method of a large app runs to megabytes (6 MB in the test process), and a reader slowed by a busy machine
    /// must not make the runtime drop it (a 16 MB buffer lost it once in a loaded test run: no method named).
    /// </summary>
    internal const int BufferMegabytes = 64;

    /// <summary>How long the rundown may take to arrive after the stop before the session is closed under it.</summary>
    private static readonly TimeSpan StopTimeout = TimeSpan.FromSeconds(30);

    private const string SampleProfiler = "Microsoft-DotNETCore-SampleProfiler";

    private static readonly EventPipeProvider[] Providers =
    [
        new(SampleProfiler, EventLevel.Informational),
        // The JIT's and loader's events name the methods compiled while sampling; the rundown names the rest.
        new("Microsoft-Windows-DotNETRuntime", EventLevel.Informational, 0x10 | 0x8),
    ];

    /// <summary>
    /// The stacks, innermost frame first (at most <see cref="PoolStackReader.MaxFrames"/> each); the trace's size,
    /// whether it reached <paramref name="maxBytes"/> and stopped the sampling early, and the events the runtime
    /// dropped (its buffer full: then some methods may go unnamed).
    /// </summary>
    public static (List<IReadOnlyList<ManagedFrame>> Stacks, long TraceBytes, bool StoppedEarly, int EventsLost) Sample(TimeSpan sampleFor, long maxBytes = MaxSampleBytes)
    {
        var trace = Path.Combine(Path.GetTempPath(), $"muxwatch-stacks-{Environment.ProcessId}-{Guid.NewGuid():N}.nettrace");
        string? etlx = null;
        try
        {
            var stoppedEarly = Record(trace, sampleFor, maxBytes);
            var traceBytes = new FileInfo(trace).Length;
            etlx = TraceLog.CreateFromEventPipeDataFile(trace);
            using var log = new TraceLog(etlx);
            var newest = new Dictionary<int, TraceCallStack>();
            foreach (var sample in log.Events)
            {
                if (sample.ProviderName == SampleProfiler && sample.CallStack() is { } stack)
                {
                    newest[sample.ThreadID] = stack;
                }
            }

            // A worker blocked deep in the app's code has its pool loop beyond the 100 frames the runtime samples: it
            // is told by its name instead (what is there), read once the sampling is over.
            var poolWorkers = PoolWorkerThreadIds();
            return ([.. newest.Select(sample => Frames(sample.Value, poolWorkers.Contains(sample.Key)))], traceBytes, stoppedEarly, log.EventsLost);
        }
        finally
        {
            TryDelete(trace);
            if (etlx is not null)
            {
                TryDelete(etlx);
            }
        }
    }

    /// <summary>Writes the session to <paramref name="path"/>: sampling for <paramref name="sampleFor"/> (less when the trace reaches <paramref name="maxBytes"/>: true), then the rundown.</summary>
    private static bool Record(string path, TimeSpan sampleFor, long maxBytes)
    {
        using var session = new DiagnosticsClient(Environment.ProcessId).StartEventPipeSession(Providers, requestRundown: true, circularBufferMB: BufferMegabytes);
        using var file = new FileStream(path, FileMode.CreateNew, FileAccess.Write, FileShare.None);
        using var tooLarge = new ManualResetEventSlim();
        Exception? failed = null;

        // Read on a thread, not the pool: the session's stop waits for its stream to be read.
        var reader = new Thread(() =>
        {
            try
            {
                var buffer = new byte[81920];
                long written = 0;
                int read;
                while ((read = session.EventStream.Read(buffer, 0, buffer.Length)) > 0)
                {
                    file.Write(buffer, 0, read);
                    if ((written += read) > maxBytes)
                    {
                        tooLarge.Set();
                    }
                }
            }
#pragma warning disable CA1031 // handed to the capturing thread, which throws it
            catch (Exception ex)
#pragma warning restore CA1031
            {
                failed = ex;
                tooLarge.Set();
            }
        })
        { IsBackground = true, Name = "MuxWatch pool stacks reader" };
        reader.Start();
        bool stoppedEarly;
        try
        {
            stoppedEarly = tooLarge.Wait(sampleFor);
            session.Stop();
        }
        finally
        {
            // Stopped, the stream ends after the rundown; not stopped (the stop threw), closing the session ends it. The
            // reader is done before the file and the event it writes to are disposed.
            if (!reader.Join(StopTimeout))
            {
                session.Dispose();
                reader.Join();
            }
        }

        if (failed is not null)
        {
            throw new IOException("The stack capture's trace could not be written.", failed);
        }

        return stoppedEarly;
    }

    private static IReadOnlyList<ManagedFrame> Frames(TraceCallStack stack, bool namedPoolWorker)
    {
        var frames = new List<ManagedFrame>();
        for (var frame = stack; frame is not null; frame = frame.Caller)
        {
            frames.Add(new ManagedFrame(frame.CodeAddress.FullMethodName ?? string.Empty, frame.CodeAddress.ModuleName ?? string.Empty));
        }

        if (namedPoolWorker && !frames.Exists(PoolStackReader.IsWorkerLoop))
        {
            frames.Add(PoolStackReader.BeyondTheSample); // its loop fell out of the sample; its name says it is the pool's
        }

        return PoolStackReader.Bounded(frames);
    }

    /// <summary>The name the runtime gives the pool's worker threads, as the kernel keeps it (15 characters at most).</summary>
    internal const string PoolWorkerThreadName = ".NET TP Worker";

    /// <summary>
    /// The operating system's ids of the pool's worker threads, by their names in <c>/proc/self/task/*/comm</c> (Linux;
    /// elsewhere none, and a worker deeper than the sample is left out, as before). A thread that ends meanwhile is skipped.
    /// </summary>
    internal static HashSet<int> PoolWorkerThreadIds()
    {
        var ids = new HashSet<int>();
        if (!OperatingSystem.IsLinux())
        {
            return ids;
        }

        try
        {
            foreach (var task in Directory.EnumerateDirectories("/proc/self/task"))
            {
                try
                {
                    if (int.TryParse(Path.GetFileName(task), out var id) && File.ReadAllText(Path.Combine(task, "comm")).TrimEnd('\n') == PoolWorkerThreadName)
                    {
                        ids.Add(id);
                    }
                }
                catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
                {
                    // the thread ended while the list was read
                }
            }
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // no /proc to read (a sandbox): workers deeper than the sample are left out
        }

        return ids;
    }

    private static void TryDelete(string path)
    {
        try
        {
            File.Delete(path);
        }
        catch (IOException)
        {
            // a temporary file left behind in the temp folder; nothing else depends on it
        }
        catch (UnauthorizedAccessException)
        {
            // idem
        }
    }
}
