using MuxWatch.Model;
using MuxWatch.Reading;

namespace MuxWatch.Tests;

/// <summary>
/// The sum of a real process's sampled stacks (Corpus/pool-stacks.txt: every managed thread of a .NET 10 app whose
/// pool workers were blocked in six ways and busy in one, captured by the same EventPipe session MuxWatch opens),
/// and the names the reader gives the compiler's own methods.
/// </summary>
public sealed class PoolStackReaderTests
{
    [Fact]
    public void A_real_processs_workers_are_summed_by_the_apps_method_and_how_each_waited()
    {
        var (workers, blocked, busy, sites) = PoolStackReader.Read(ReadCorpus());

        Assert.Equal(
            [
                new PoolThreadSite("OrderService.LoadCart", "GetAwaiter().GetResult()", 6),
                new PoolThreadSite("InvoiceService.Total", ".Result", 3),
                new PoolThreadSite("Backoff.Pause", "Thread.Sleep", 2),
                new PoolThreadSite("Ledger.Post", "lock", 2),
                new PoolThreadSite("ReportService.WaitForReport", ".Wait()", 2),
                new PoolThreadSite("PriceCalculator.Compute", null, 2),
                new PoolThreadSite("Handler.HandleAsync", ".Wait()", 1),
            ],
            sites);
        Assert.Equal((16, 2), (blocked, busy));
        Assert.True(workers >= blocked + busy, $"{workers} workers"); // idle ones, waiting for work, are workers too
    }

    [Fact]
    public void Threads_that_are_not_the_pools_and_idle_workers_name_no_site()
    {
        var notWorkers = ReadCorpus().Where(stack => !stack.Any(f => f.Method.Contains("PortableThreadPool+WorkerThread", StringComparison.Ordinal))).ToList();
        Assert.NotEmpty(notWorkers); // the main thread, the timer thread, the one holding the lock, ...

        var (workers, blocked, busy, sites) = PoolStackReader.Read(notWorkers);

        Assert.Equal((0, 0, 0), (workers, blocked, busy));
        Assert.Empty(sites);
    }

    [Theory]
    [InlineData("Shop.OrderService.LoadCart(int32)", "OrderService.LoadCart")]
    [InlineData("Shop.OrderService+<LoadCartAsync>d__3.MoveNext()", "OrderService.LoadCartAsync")]
    [InlineData("Shop.OrderService+<>c.<Register>b__0_0(class System.Object)", "OrderService.Register (lambda)")]
    [InlineData("Shop.OrderService+<>c__DisplayClass2_0.<Handle>b__1()", "OrderService.Handle (lambda)")]
    [InlineData("Program+<>c.<<Main>$>b__0_2()", "Program.Main (lambda)")]
    [InlineData("Shop.PriceCalculator`1[System.Decimal].Compute()", "PriceCalculator.Compute")]
    [InlineData("Shop.Outer+Inner.Run()", "Inner.Run")]
    [InlineData("Shop.Cart\u202Eevil.Load()", "Cart?evil.Load")]
    public void Compiler_made_names_read_as_the_method_the_app_wrote(string frame, string shown) =>
        Assert.Equal(shown, PoolStackReader.ShortName(frame));

    [Fact]
    public void A_method_name_of_any_length_is_bounded()
    {
        var name = PoolStackReader.ShortName("Shop." + new string('A', 100_000) + ".Load()");

        Assert.Equal(PoolStackReader.MaxMethodChars, name.Length);
        Assert.EndsWith("…", name, StringComparison.Ordinal);
    }

    [Fact]
    public void At_most_the_bound_of_sites_is_kept_whatever_the_app_runs()
    {
        // 500 workers, each blocked in a method of its own.
        var stacks = Enumerable.Range(0, 500).Select(i => (IReadOnlyList<ManagedFrame>)
        [
            new("System.Threading.Thread.Sleep(int32)", "System.Private.CoreLib"),
            new($"Shop.Job{i}.Run()", "Shop"),
            new("System.Threading.ThreadPoolWorkQueue.Dispatch()", "System.Private.CoreLib"),
            new("System.Threading.PortableThreadPool+WorkerThread.WorkerThreadStart()", "System.Private.CoreLib"),
        ]);

        var (workers, blocked, _, sites) = PoolStackReader.Read(stacks);

        Assert.Equal((500, 500), (workers, blocked));
        Assert.Equal(PoolStackCapture.MaxSites, sites.Count);
    }

    [Fact]
    public void A_stack_of_any_depth_keeps_its_innermost_and_outermost_frames()
    {
        // The app's method, its wait, 10,000 frames of recursion, then the pool's loop.
        var frames = new List<ManagedFrame> { new("System.Threading.Thread.Sleep(int32)", "System.Private.CoreLib"), new("Shop.Deep.Recurse(int32)", "Shop") };
        frames.AddRange(Enumerable.Repeat(new ManagedFrame("Shop.Deep.Recurse(int32)", "Shop"), 10_000));
        frames.Add(new("System.Threading.ThreadPoolWorkQueue.Dispatch()", "System.Private.CoreLib"));
        frames.Add(new("System.Threading.PortableThreadPool+WorkerThread.WorkerThreadStart()", "System.Private.CoreLib"));

        var bounded = PoolStackReader.Bounded(frames);

        Assert.Equal(PoolStackReader.MaxFrames, bounded.Count);
        Assert.Equal(new PoolThreadSite("Deep.Recurse", "Thread.Sleep", 1), Assert.Single(PoolStackReader.Read([bounded]).Sites));
    }

    private static List<IReadOnlyList<ManagedFrame>> ReadCorpus()
    {
        var stacks = new List<IReadOnlyList<ManagedFrame>>();
        List<ManagedFrame>? current = null;
        foreach (var line in File.ReadLines(Path.Combine(AppContext.BaseDirectory, "Corpus", "pool-stacks.txt")))
        {
            if (line == "# thread")
            {
                stacks.Add(current = []);
            }
            else if (!line.StartsWith('#') && current is not null)
            {
                var tab = line.IndexOf('\t', StringComparison.Ordinal);
                current.Add(new ManagedFrame(line[(tab + 1)..], line[..tab]));
            }
        }

        return stacks;
    }
}
