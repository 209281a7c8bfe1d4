# syntax=docker/dockerfile:1
# The MuxWatch sidecar. Build from the repository root:  docker build -t muxwatch .
# Run:  docker run -p 9401:9401 -e MuxWatch__Targets__0__Name=cache -e MuxWatch__Targets__0__ConnectionString=redis:6379 muxwatch

# Compiled ahead of time (native AOT): no JIT and no framework assemblies mapped, so the sidecar needs
# about 60 MB less at 500 endpoints (docs/benchmarks.md, Memory). Linking needs clang and zlib's headers.
FROM mcr.microsoft.com/dotnet/sdk:10.0 AS build
RUN apt-get update && apt-get install -y --no-install-recommends clang zlib1g-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Restore as its own layer: it is re-run only when a project file or the central versions change.
COPY global.json Directory.Build.props Directory.Packages.props ./
COPY src/Directory.Build.props src/Directory.Build.targets src/
COPY src/MuxWatch/MuxWatch.csproj src/MuxWatch/
COPY src/MuxWatch.StackExchangeRedis/MuxWatch.StackExchangeRedis.csproj src/MuxWatch.StackExchangeRedis/
COPY src/MuxWatch.AspNetCore/MuxWatch.AspNetCore.csproj src/MuxWatch.AspNetCore/
COPY src/MuxWatch.Tool/MuxWatch.Tool.csproj src/MuxWatch.Tool/
RUN dotnet restore src/MuxWatch.Tool/MuxWatch.Tool.csproj --use-current-runtime -p:PublishAot=true
COPY .editorconfig ./
COPY src/ src/
RUN dotnet publish src/MuxWatch.Tool/MuxWatch.Tool.csproj -c Release --no-restore --use-current-runtime -p:PublishAot=true -p:DebugType=none -p:GenerateDocumentationFile=false -o /app

# Chiseled: no shell, no package manager, non-root by default; runtime-deps, since a native app brings its runtime.
FROM mcr.microsoft.com/dotnet/runtime-deps:10.0-noble-chiseled AS runtime
WORKDIR /app
COPY --from=build /app ./
USER $APP_UID
# Listen on every interface inside the container; configure everything else with MuxWatch__* variables.
ENV Urls=http://+:9401
# The budget here is .NET's container rule: 75% of the container's memory limit (144 MiB under the shipped
# manifest's 192 Mi); the native build bakes no heap cap of its own (the JIT build's is 256 MiB).
# A gen0 budget of 4 MiB (hex): the GC otherwise sizes it from the CPU's cache and let an idle 50-endpoint sidecar
# grow from 52 to 116 MB before its first collection; with it, 47 MB flat for 7% more CPU (docs/benchmarks.md).
# Only an environment variable sets it (the GC reads no runtimeconfig key for it).
ENV DOTNET_GCgen0size=400000
EXPOSE 9401
ENTRYPOINT ["/app/MuxWatch.Tool"]
