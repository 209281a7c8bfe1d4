using System.Diagnostics;
using MuxWatch.Export;
using Prometheus;

namespace MuxWatch.Tool.Api;

/// <summary>
/// The process' own families on <c>/metrics</c>, under prometheus-net's names (<c>process_*</c>,
/// <c>dotnet_*</c>), read cheaply at each scrape; the open-handle count is refreshed in the background.
/// </summary>
/// <remarks>
/// Hand-written because prometheus-net's built-in process metrics count open handles on every scrape by
/// listing <c>/proc/self/fd</c>, which the kernel answers at about 12 µs a descriptor: 25 ms per scrape at
/// 500 endpoints (2,000 sockets), more than the rest of the scrape together (sidecar-scale,
/// docs/benchmarks.md). Program.cs turns those off; these take their place.
/// </remarks>
internal sealed class ProcessMetrics : BackgroundService
{
    /// <summary>How often the open-handle count is taken.</summary>
    internal static readonly TimeSpan HandleCountInterval = TimeSpan.FromSeconds(30);

    // Never disposed: the before-collect callback may outlive this host on a registry a test reuses.
    private readonly Process _process = Process.GetCurrentProcess();
    private readonly Counter _cpu;
    private readonly Gauge _workingSet;
    private readonly Gauge _privateMemory;
    private readonly Gauge _virtualMemory;
    private readonly Gauge _threads;
    private readonly Gauge _openHandles;
    private readonly Gauge _managedMemory;
    private readonly Counter _collections;

    public ProcessMetrics(MuxWatchMetrics metrics)
    {
        var factory = Metrics.WithCustomRegistry(metrics.Registry);
        _cpu = factory.CreateCounter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.");
        factory.CreateGauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.")
            .Set(new DateTimeOffset(_process.StartTime.ToUniversalTime()).ToUnixTimeMilliseconds() / 1000.0);
        _workingSet = factory.CreateGauge("process_working_set_bytes", "Process working set");
        _privateMemory = factory.CreateGauge("process_private_memory_bytes", "Process private memory size");
        _virtualMemory = factory.CreateGauge("process_virtual_memory_bytes", "Virtual memory size in bytes.");
        _threads = factory.CreateGauge("process_num_threads", "Total number of threads");
        _openHandles = factory.CreateGauge("process_open_handles", $"Number of open handles, taken every {HandleCountInterval.TotalSeconds:0} s.");
        _managedMemory = factory.CreateGauge("dotnet_total_memory_bytes", "Total known allocated memory");
        _collections = factory.CreateCounter("dotnet_collection_count_total", "GC collection count", "generation");
        metrics.Registry.AddBeforeCollectCallback(Update);
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        using var timer = new PeriodicTimer(HandleCountInterval);
        do
        {
            _openHandles.Set(CountOpenHandles());
        }
        while (await timer.WaitForNextTickAsync(stoppingToken).ConfigureAwait(false));
    }

    private void Update()
    {
        _process.Refresh();
        _cpu.IncTo(_process.TotalProcessorTime.TotalSeconds); // one read of /proc/self/stat
        if (!TryReadStatus())
        {
            _workingSet.Set(_process.WorkingSet64);
            _privateMemory.Set(_process.PrivateMemorySize64);
            _virtualMemory.Set(_process.VirtualMemorySize64);
            _threads.Set(_process.Threads.Count);
        }

        _managedMemory.Set(GC.GetTotalMemory(forceFullCollection: false));
        for (var generation = 0; generation <= GC.MaxGeneration; generation++)
        {
            _collections.WithLabels(Generations[generation]).IncTo(GC.CollectionCount(generation));
        }
    }

    private static readonly string[] Generations = ["0", "1", "2"];

    /// <summary>
    /// On Linux, the memory and thread figures from one read of <c>/proc/self/status</c> (about 20 µs), as
    /// <see cref="Process"/> reports them (<c>VmRSS</c>, <c>VmData</c> + <c>VmStk</c>, <c>VmSize</c>, <c>Threads</c>).
    /// Hand-written because <see cref="Process"/> builds its whole process info for the first of them, one
    /// <c>/proc/self/task/*/stat</c> read per thread: 0.6 ms a scrape with 40 threads (measured), a twentieth of
    /// a 500-endpoint sidecar's scrape. False elsewhere, or when the file cannot be read.
    /// </summary>
    private bool TryReadStatus()
    {
        if (!OperatingSystem.IsLinux())
        {
            return false;
        }

        long? rss = null, data = null, stack = null, size = null, threads = null;
        try
        {
            foreach (var line in File.ReadLines("/proc/self/status"))
            {
                switch (line.AsSpan(0, Math.Max(0, line.IndexOf(':', StringComparison.Ordinal))))
                {
                    case "VmRSS": rss = Kilobytes(line); break;
                    case "VmData": data = Kilobytes(line); break;
                    case "VmStk": stack = Kilobytes(line); break;
                    case "VmSize": size = Kilobytes(line); break;
                    case "Threads": threads = Number(line); break;
                    default: break;
                }
            }
        }
        catch (IOException)
        {
            return false;
        }
        catch (UnauthorizedAccessException)
        {
            return false;
        }

        if (rss is null || data is null || stack is null || size is null || threads is null)
        {
            return false;
        }

        _workingSet.Set(rss.Value);
        _privateMemory.Set(data.Value + stack.Value);
        _virtualMemory.Set(size.Value);
        _threads.Set(threads.Value);
        return true;
    }

    /// <summary>A <c>Name:  1234 kB</c> line's figure in bytes.</summary>
    private static long? Kilobytes(string line) => Number(line) * 1024;

    /// <summary>The number after the colon of a status line (<c>Threads:  41</c>, <c>VmRSS:  1234 kB</c>).</summary>
    private static long? Number(string line)
    {
        var value = line.AsSpan(line.IndexOf(':', StringComparison.Ordinal) + 1).Trim();
        var end = value.IndexOf(' ');
        return long.TryParse(end < 0 ? value : value[..end], System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var number) ? number : null;
    }

    private static int CountOpenHandles()
    {
        try
        {
            return Directory.EnumerateFileSystemEntries("/proc/self/fd").Count();
        }
        catch (IOException)
        {
            return 0;
        }
        catch (UnauthorizedAccessException)
        {
            return 0;
        }
    }
}
