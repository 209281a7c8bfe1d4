using MuxWatch.Model;

namespace MuxWatch.Reading;

/// <summary>One frame of a sampled managed stack: the method as the runtime names it, and its assembly.</summary>
/// <param name="Method">With its namespace, type and signature: <c>System.Threading.Monitor.Wait(class System.Object,int32)</c>.</param>
/// <param name="Module">The assembly's name, without extension (empty for a frame that could not be resolved).</param>
internal readonly record struct ManagedFrame(string Method, string Module);

/// <summary>
/// Sums sampled thread stacks into where the pool's workers were: for each worker running a work item, the
/// innermost frame of the app's own code (not the runtime's, ASP.NET Core's, StackExchange.Redis's or MuxWatch's)
/// and, when it was blocked in a wait, the call through which it waited.
/// </summary>
/// <remarks>
/// Written here because no library reads a stack for this: the frame names are the runtime's own (what
/// <c>dotnet-stack</c> prints), and the waits are the runtime's public wait primitives.
/// </remarks>
internal static class PoolStackReader
{
    /// <summary>The most frames kept of one stack: the innermost, where the app's frame and its wait are, and the outermost, where the pool's loop is.</summary>
    internal const int MaxFrames = 256;

    /// <summary>Of <see cref="MaxFrames"/>, how many are the outermost.</summary>
    internal const int OutermostFrames = 64;

    /// <summary>The longest method name kept; a generic type's name can run to kilobytes.</summary>
    internal const int MaxMethodChars = 160;

    // Assemblies that are not the app's: the runtime's and the framework's, the client's, MuxWatch's own.
    private static readonly string[] FrameworkModulePrefixes = ["System.", "Microsoft.", "StackExchange.Redis", "Pipelines.Sockets.Unofficial"];
    private static readonly HashSet<string> FrameworkModules = new(StringComparer.OrdinalIgnoreCase)
    {
        "System", "mscorlib", "netstandard", "MuxWatch", "MuxWatch.StackExchangeRedis", "MuxWatch.AspNetCore", string.Empty,
        "Anonymously Hosted DynamicMethods Assembly", // compiled expressions (dynamicClass.lambda_method8): a framework's delegates, no code of the app's to name
    };

    // The runtime's wait primitives: a worker with one of them above its app frame is blocked, not busy.
    private static readonly string[] WaitMethods =
    [
        "System.Threading.Monitor.Wait", "System.Threading.Monitor.Enter", "System.Threading.Monitor.ReliableEnter",
        "System.Threading.Monitor.TryEnter", "System.Threading.Lock.Enter", "System.Threading.Lock.TryEnter",
        "System.Threading.WaitHandle.Wait", "System.Threading.ManualResetEventSlim.Wait", "System.Threading.SemaphoreSlim.Wait",
        "System.Threading.Thread.Sleep", "System.Threading.Thread.Join", "System.Threading.Tasks.Task.Wait",
        "System.Threading.Tasks.Task.InternalWait", "System.Threading.Tasks.Task.SpinThenBlockingWait",
        "System.Threading.CountdownEvent.Wait", "System.Threading.ReaderWriterLockSlim.", "System.Threading.LowLevelLock",
        "System.Threading.LowLevelMonitor", "System.Threading.Barrier.SignalAndWait",
    ];

    /// <summary>The threads in <paramref name="stacks"/> (each innermost frame first) that are the pool's workers, summed.</summary>
    public static (int Workers, int Blocked, int Busy, IReadOnlyList<PoolThreadSite> Sites) Read(IEnumerable<IReadOnlyList<ManagedFrame>> stacks)
    {
        ArgumentNullException.ThrowIfNull(stacks);
        var workers = 0;
        var blocked = 0;
        var busy = 0;
        var sites = new Dictionary<(string Method, string? Via), int>();
        foreach (var stack in stacks)
        {
            if (!stack.Any(IsWorkerLoop))
            {
                continue; // not a pool thread
            }

            workers++;
            var dispatch = stack[^1] == BeyondTheSample
                ? stack.Count - 1 // the loop and its dispatch beyond the sample: a work item deeper than 100 frames
                : IndexOf(stack, f => f.Method.StartsWith("System.Threading.ThreadPoolWorkQueue.Dispatch", StringComparison.Ordinal));
            if (dispatch < 0)
            {
                continue; // idle: waiting for work, running none
            }

            var app = IndexOf(stack, IsAppFrame, dispatch);
            var waitAt = IndexOf(stack, f => WaitMethods.Any(w => f.Method.StartsWith(w, StringComparison.Ordinal)), app < 0 ? dispatch : app);
            if (waitAt >= 0)
            {
                blocked++;
            }
            else
            {
                busy++;
            }

            if (app >= 0)
            {
                var key = (ShortName(stack[app].Method), waitAt >= 0 ? Via(stack[app - 1 >= 0 ? app - 1 : 0]) : null);
                sites[key] = sites.GetValueOrDefault(key) + 1;
            }
        }

        var ordered = sites
            .OrderByDescending(s => s.Value)
            .ThenBy(s => s.Key.Via is null)
            .ThenBy(s => s.Key.Method, StringComparer.Ordinal)
            .Take(PoolStackCapture.MaxSites)
            .Select(s => new PoolThreadSite(s.Key.Method, s.Key.Via, s.Value))
            .ToList();
        return (workers, blocked, busy, ordered);
    }

    /// <summary>
    /// <paramref name="frames"/> (innermost first) cut to <see cref="MaxFrames"/>, dropping the middle: a recursion
    /// thousands deep keeps both the app's frame and its wait (innermost) and the pool's loop (outermost).
    /// </summary>
    public static IReadOnlyList<ManagedFrame> Bounded(List<ManagedFrame> frames)
    {
        ArgumentNullException.ThrowIfNull(frames);
        return frames.Count <= MaxFrames ? frames : [.. frames.Take(MaxFrames - OutermostFrames), .. frames.TakeLast(OutermostFrames)];
    }

    /// <summary>
    /// The frame put at the outer end of a pool worker's stack whose loop fell beyond the frames the runtime samples (100,
    /// innermost first): the thread is the pool's by its name, and it was running a work item (its dispatch is out there too).
    /// </summary>
    internal static readonly ManagedFrame BeyondTheSample = new("System.Threading.PortableThreadPool+WorkerThread.(beyond the sampled frames)", "System.Private.CoreLib");

    internal static bool IsWorkerLoop(ManagedFrame frame) =>
        frame.Method.StartsWith("System.Threading.PortableThreadPool+WorkerThread.", StringComparison.Ordinal)
        || frame.Method.StartsWith("System.Threading.WindowsThreadPool.", StringComparison.Ordinal);

    private static bool IsAppFrame(ManagedFrame frame) =>
        !FrameworkModules.Contains(frame.Module)
        && !frame.Method.StartsWith("dynamicClass.", StringComparison.Ordinal)
        && !FrameworkModulePrefixes.Any(prefix => frame.Module.StartsWith(prefix, StringComparison.OrdinalIgnoreCase));

    /// <summary>The first frame from the innermost, before <paramref name="before"/>, that matches.</summary>
    private static int IndexOf(IReadOnlyList<ManagedFrame> stack, Func<ManagedFrame, bool> match, int before = int.MaxValue)
    {
        for (var i = 0; i < Math.Min(before, stack.Count); i++)
        {
            if (match(stack[i]))
            {
                return i;
            }
        }

        return -1;
    }

    /// <summary>The call through which the app's frame waited, as the app wrote it.</summary>
    private static string Via(ManagedFrame called)
    {
        var method = WithoutSignature(called.Method);
        return method switch
        {
            _ when method.StartsWith("System.Runtime.CompilerServices.ConfiguredTaskAwaitable", StringComparison.Ordinal)
                || method.StartsWith("System.Runtime.CompilerServices.ConfiguredValueTaskAwaitable", StringComparison.Ordinal)
                => "ConfigureAwait(false).GetAwaiter().GetResult()",
            _ when method.StartsWith("System.Runtime.CompilerServices.TaskAwaiter", StringComparison.Ordinal)
                || method.StartsWith("System.Runtime.CompilerServices.ValueTaskAwaiter", StringComparison.Ordinal)
                => "GetAwaiter().GetResult()",
            _ when method.EndsWith(".get_Result", StringComparison.Ordinal) => ".Result",
            _ when method.StartsWith("System.Threading.Tasks.Task.WaitAll", StringComparison.Ordinal) => "Task.WaitAll()",
            _ when method.StartsWith("System.Threading.Tasks.Task.WaitAny", StringComparison.Ordinal) => "Task.WaitAny()",
            _ when method.StartsWith("System.Threading.Tasks.Task", StringComparison.Ordinal) && method.EndsWith(".Wait", StringComparison.Ordinal) => ".Wait()",
            _ when method.StartsWith("System.Threading.Monitor.", StringComparison.Ordinal) && method.Contains("Enter", StringComparison.Ordinal) => "lock",
            _ when method.StartsWith("System.Threading.Lock.", StringComparison.Ordinal) => "lock",
            _ => ShortName(called.Method),
        };
    }

    /// <summary>
    /// <c>Shop.OrderService+&lt;LoadCartAsync&gt;d__3.MoveNext()</c> as <c>OrderService.LoadCartAsync</c>;
    /// <c>Shop.OrderService.LoadCart(int32)</c> as <c>OrderService.LoadCart</c>: the type and method, no namespace,
    /// no signature, no generic arguments.
    /// </summary>
    internal static string ShortName(string method)
    {
        var name = WithoutSignature(method);
        var generic = name.IndexOf('[', StringComparison.Ordinal);
        if (generic >= 0)
        {
            var close = name.LastIndexOf(']');
            name = close > generic ? name[..generic] + name[(close + 1)..] : name[..generic];
        }

        var lastDot = name.LastIndexOf('.');
        var type = lastDot > 0 ? name[..lastDot] : string.Empty;
        var member = lastDot > 0 ? name[(lastDot + 1)..] : name;

        // Compiler-made types nested in the app's: an async method's state machine (Type+<Method>d__3.MoveNext), a
        // lambda's closure (Type+<>c.<Method>b__0_0); a lambda or local function on the type itself (Type.<Method>b__0_0).
        var parts = type.Split('+');
        var made = parts.Skip(1).Where(p => p.StartsWith('<')).ToList();
        type = string.Join('.', parts.Where(p => !p.StartsWith('<')));
        if (made.LastOrDefault(p => p != "<>c" && !p.StartsWith("<>c__", StringComparison.Ordinal)) is { } stateMachine)
        {
            member = Unmangled(stateMachine);
        }
        else if (member.StartsWith('<'))
        {
            member = Unmangled(member) + " (lambda)";
        }

        var typeName = type.LastIndexOf('.') is var dot and >= 0 ? type[(dot + 1)..] : type;
        var backtick = typeName.IndexOf('`', StringComparison.Ordinal);
        if (backtick >= 0)
        {
            typeName = typeName[..backtick];
        }

        var shown = typeName.Length > 0 ? $"{typeName}.{member}" : member;
        shown = new string([.. shown.Select(c => char.IsControl(c) || char.GetUnicodeCategory(c) == System.Globalization.UnicodeCategory.Format ? '?' : c)]);
        return shown.Length > MaxMethodChars ? shown[..(MaxMethodChars - 1)] + "…" : shown;
    }

    /// <summary><c>&lt;&lt;Main&gt;$&gt;b__0_0</c> and <c>&lt;LoadCart&gt;d__3</c> as the method they came from.</summary>
    private static string Unmangled(string name)
    {
        var trimmed = name.TrimStart('<');
        var close = trimmed.IndexOf('>', StringComparison.Ordinal);
        return close > 0 ? trimmed[..close] : trimmed;
    }

    private static string WithoutSignature(string method) =>
        method.IndexOf('(', StringComparison.Ordinal) is var open and >= 0 ? method[..open] : method;
}
