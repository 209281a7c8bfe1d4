using System.Diagnostics;
using System.Text.Json;
using System.Text.RegularExpressions;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// No container engine runs here, so this proves what can be proven: the restore and publish commands
/// written in the Dockerfile succeed on the repository, and the published app (native AOT), started the
/// way the ENTRYPOINT starts it (with the image's environment), serves. test.sh then runs the tests that
/// start the service as a process once more on that build (artifacts/container-app).
/// </summary>
[TakesMinutes]
[StartsFirst]
public sealed partial class ContainerBuildTests
{
    [Fact]
    public async Task The_Dockerfile_publish_output_starts_as_its_entrypoint_and_serves()
    {
        var dockerfile = await File.ReadAllTextAsync(Path.Combine(BuiltProgram.RepositoryRoot, "Dockerfile"));
        var context = Directory.CreateTempSubdirectory("muxwatch-context-").FullName;
        // Kept: test.sh runs the process tests once more on this build, the image's app (native AOT).
        var output = Path.Combine(BuiltProgram.RepositoryRoot, "artifacts", "container-app");
        if (Directory.Exists(output))
        {
            Directory.Delete(output, recursive: true);
        }

        Directory.CreateDirectory(output);
        try
        {
            // The build stage, replayed in a scratch folder: its COPY lines decide what the build sees
            // (a file the Dockerfile forgets to copy fails here as it would in the image), and the
            // repository's own build output is left alone for the tests running beside this one.
            var buildStage = dockerfile[..dockerfile.IndexOf("AS runtime", StringComparison.Ordinal)];
            foreach (Match instruction in BuildInstructions().Matches(buildStage))
            {
                // In order, as Docker runs them: the restore layer must work with only what was copied before it.
                if (instruction.Groups["copy"].Success)
                {
                    var parts = instruction.Groups["copy"].Value.Split(' ', StringSplitOptions.RemoveEmptyEntries);
                    foreach (var source in parts[..^1])
                    {
                        CopyIntoContext(source, parts[^1], context);
                    }

                    continue;
                }

                var command = instruction.Groups["command"].Value;
                var arguments = command.Split(' ', StringSplitOptions.RemoveEmptyEntries)
                    .Select(a => a == "/app" ? output : a).ToArray();
                Assert.Equal("dotnet", arguments[0]);
                var info = new ProcessStartInfo("dotnet") { WorkingDirectory = context, RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true };
                foreach (var argument in arguments[1..])
                {
                    info.ArgumentList.Add(argument);
                }

                var (exitCode, stdout, stderr) = await BuiltProgram.RunAsync(info, timeout: TimeSpan.FromMinutes(10)); // a native compile takes minutes
                Assert.True(exitCode == 0, $"'{command}' failed: {stdout}\n{stderr}");
            }

            var entrypoint = JsonSerializer.Deserialize<string[]>(Entrypoint().Match(dockerfile).Groups["json"].Value)!;
            var port = FreePort.Next();
            var executable = entrypoint[0].StartsWith("/app/", StringComparison.Ordinal) ? Path.Combine(output, entrypoint[0]["/app/".Length..]) : entrypoint[0];
            var start = new ProcessStartInfo(executable) { WorkingDirectory = output, RedirectStandardOutput = true, RedirectStandardError = true };
            foreach (var argument in entrypoint[1..])
            {
                start.ArgumentList.Add(argument);
            }

            // The image's ENV (its GC's gen0 budget among them), with the port made free for this machine.
            foreach (System.Text.RegularExpressions.Match env in System.Text.RegularExpressions.Regex.Matches(dockerfile, @"(?m)^ENV (?<name>\w+)=(?<value>\S+)\s*$"))
            {
                start.Environment[env.Groups["name"].Value] = env.Groups["value"].Value;
            }

            Assert.Equal("400000", start.Environment["DOTNET_GCgen0size"]);
            start.Environment["Urls"] = $"http://127.0.0.1:{port}";
            using var process = Process.Start(start)!;
            try
            {
                using var client = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}") };
                await Eventually.UntilAsync(
                    async () => (await client.GetAsync(new Uri("/healthz", UriKind.Relative))).IsSuccessStatusCode,
                    "the published app to serve /healthz");
                using var status = await client.GetAsync(new Uri("/api/status", UriKind.Relative));
                Assert.True(status.IsSuccessStatusCode);
            }
            finally
            {
                process.Kill(entireProcessTree: true);
                await process.WaitForExitAsync();
            }
        }
        finally
        {
            Directory.Delete(context, recursive: true);
        }
    }

    /// <summary>COPY as Docker does it from this repository, leaving out what .dockerignore leaves out (bin/, obj/).</summary>
    private static void CopyIntoContext(string source, string destination, string context)
    {
        var from = Path.Combine(BuiltProgram.RepositoryRoot, source.TrimEnd('/'));
        var to = Path.Combine(context, destination.TrimEnd('/'));
        if (File.Exists(from))
        {
            var target = destination.EndsWith('/') || destination == "./" ? Path.Combine(to, Path.GetFileName(from)) : to;
            Directory.CreateDirectory(Path.GetDirectoryName(target)!);
            File.Copy(from, target, overwrite: true);
            return;
        }

        foreach (var file in Directory.EnumerateFiles(from, "*", SearchOption.AllDirectories))
        {
            var relative = Path.GetRelativePath(from, file);
            if (relative.Split(Path.DirectorySeparatorChar).Any(part => part is "bin" or "obj"))
            {
                continue;
            }

            var target = Path.Combine(to, relative);
            Directory.CreateDirectory(Path.GetDirectoryName(target)!);
            File.Copy(file, target, overwrite: true);
        }
    }

    [Fact]
    public async Task The_image_runs_as_a_non_root_user_and_exposes_the_service_port()
    {
        var dockerfile = await File.ReadAllTextAsync(Path.Combine(BuiltProgram.RepositoryRoot, "Dockerfile"));

        Assert.Matches(@"(?m)^USER \$APP_UID\s*$", dockerfile);
        Assert.Matches(@"(?m)^EXPOSE 9401\s*$", dockerfile);
        Assert.Matches(@"(?m)^ENV Urls=http://\+:9401\s*$", dockerfile);
    }

    [GeneratedRegex(@"(?m)^(?:COPY (?!--from)(?<copy>.+)|RUN (?<command>dotnet (?:restore|publish) .+))$")]
    private static partial Regex BuildInstructions();

    [GeneratedRegex(@"(?m)^ENTRYPOINT (?<json>\[.+\])\s*$")]
    private static partial Regex Entrypoint();
}
