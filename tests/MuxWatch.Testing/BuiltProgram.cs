using System.Diagnostics;

namespace MuxWatch.Testing;

/// <summary>Finds and runs the programs of this repository as built next to the running tests.</summary>
public static class BuiltProgram
{
    /// <summary>The repository root: the folder holding <c>MuxWatch.slnx</c>.</summary>
    public static string RepositoryRoot { get; } = FindRoot();

    /// <summary>The build configuration the tests run under (<c>Debug</c> or <c>Release</c>).</summary>
    public static string Configuration { get; } =
        AppContext.BaseDirectory.Contains($"{Path.DirectorySeparatorChar}Release{Path.DirectorySeparatorChar}", StringComparison.Ordinal) ? "Release" : "Debug";

    /// <summary>The built dll of project <paramref name="project"/> (under <c>src/</c>, <c>tests/</c> or <c>bench/</c>).</summary>
    public static string PathOf(string project)
    {
        foreach (var folder in (string[])["src", "tests", "bench"])
        {
            var path = Path.Combine(RepositoryRoot, folder, project, "bin", Configuration, "net10.0", project + ".dll");
            if (File.Exists(path))
            {
                return path;
            }
        }

        throw new FileNotFoundException($"{project} is not built for {Configuration}; build the solution first");
    }

    /// <summary>
    /// The environment variable naming a native build of the service to run in place of the built dll:
    /// test.sh sets it to the container's (native AOT) build to run the process tests once more on it.
    /// </summary>
    public const string ServiceExecutableVariable = "MUXWATCH_SERVICE_EXECUTABLE";

    /// <summary>
    /// Start info for <c>dotnet &lt;project&gt;.dll args...</c>, output redirected; for the service, its native
    /// build instead when <see cref="ServiceExecutableVariable"/> names one.
    /// </summary>
    public static ProcessStartInfo StartInfo(string project, params string[] arguments)
    {
        var native = project == "MuxWatch.Tool" ? Environment.GetEnvironmentVariable(ServiceExecutableVariable) : null;
        var info = new ProcessStartInfo(string.IsNullOrEmpty(native) ? "dotnet" : native)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true,
            WorkingDirectory = string.IsNullOrEmpty(native) ? Path.GetDirectoryName(PathOf(project))! : Path.GetDirectoryName(native)!,
        };
        if (string.IsNullOrEmpty(native))
        {
            info.ArgumentList.Add(PathOf(project));
        }

        foreach (var argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        // A clean environment for the child: no inherited ASP.NET settings from the test runner.
        info.Environment.Remove("ASPNETCORE_URLS");
        info.Environment.Remove("DOTNET_URLS");
        return info;
    }

    /// <summary>Runs a program to its end with a deadline, feeding <paramref name="input"/> to its standard input.</summary>
    public static async Task<(int ExitCode, string Output, string Error)> RunAsync(
        ProcessStartInfo info, string input = "", TimeSpan? timeout = null)
    {
        ArgumentNullException.ThrowIfNull(info);
        using var process = Process.Start(info) ?? throw new InvalidOperationException($"{info.FileName} did not start");
        var output = process.StandardOutput.ReadToEndAsync();
        var error = process.StandardError.ReadToEndAsync();
        await process.StandardInput.WriteAsync(input).ConfigureAwait(false);
        process.StandardInput.Close();
        using var deadline = new CancellationTokenSource(timeout ?? TimeSpan.FromMinutes(2));
        try
        {
            await process.WaitForExitAsync(deadline.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{string.Join(' ', info.ArgumentList)} did not finish in time");
        }

        return (process.ExitCode, await output.ConfigureAwait(false), await error.ConfigureAwait(false));
    }

    private static string FindRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "MuxWatch.slnx")))
            {
                return dir.FullName;
            }
        }

        throw new DirectoryNotFoundException("MuxWatch.slnx not found above " + AppContext.BaseDirectory);
    }
}
